#!/usr/bin/env python3
"""check_json.py FILE RUN KEY=VALUE...: asserts numbers in dlsched-sim's --json output.

RUN is the index in "runs"; VALUE is a number (compared within 1e-6) or null. KEY may name a nested
field with dots (fairness.jain_index, by_account.a.avg_jct_s)."""
import json
import sys

doc = json.load(open(sys.argv[1]))
run = doc["runs"][int(sys.argv[2])]
bad = 0
for spec in sys.argv[3:]:
    key, want = spec.split("=", 1)
    got = run
    for part in key.split("."):
        got = got.get(part, "<missing>") if isinstance(got, dict) else "<missing>"
    if want == "null":
        ok = got is None
    else:
        ok = isinstance(got, (int, float)) and abs(got - float(want)) <= 1e-6 * max(1.0, abs(float(want)))
    if not ok:
        print(f"{sys.argv[1]} run {sys.argv[2]} ({run.get('policy')}): {key} = {got}, want {want}")
        bad += 1
sys.exit(1 if bad else 0)
