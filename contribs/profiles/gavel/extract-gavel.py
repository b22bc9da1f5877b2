#!/usr/bin/python3
"""Extracts the isolated single-GPU throughputs from Gavel's simulation_throughputs.json.

Usage: extract-gavel.py simulation_throughputs.json > isolated.csv
The source file (stanford-futuredata/gavel, scheduler/simulation_throughputs.json, MIT licence) maps
GPU type -> "(job type, scale factor)" -> co-located job -> steps/s; the key 'null' is the job running
alone. dlsched only needs the job alone on one GPU of each type, which is this small table.
"""
import ast
import csv
import json
import sys

data = json.load(open(sys.argv[1]))
types = ["k80", "p100", "v100"]
rows = {}
for gpu in types:
    for key, value in data[gpu].items():
        job, scale = ast.literal_eval(key)
        if scale != 1:
            continue
        rows.setdefault(job, {})[gpu] = value["null"]
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["job_type"] + types)
for job in sorted(rows):
    out.writerow([job] + ["%.6g" % rows[job][g] for g in types])
