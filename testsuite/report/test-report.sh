#!/usr/bin/env bash
# dlsched-report on hand-written sacct outputs (testsuite/report/data), against figures computed by
# hand. Times are sacct's local times; TZ is pinned to UTC, where 2026-01-01T00:00:00 = 1767225600.
#
# data/sacct.txt (sacct --parsable2 --noheader, dlsched-report's 16 fields), t = minutes:seconds:
#   101 COMPLETED  submit 0:00 start 0:00 end 1:40, 2 GPUs, deadline 5:00 -> met (normal)
#                  JCT 100, queue 0, GPU-s 100*2 = 200
#   102 REQUEUED   submit 0:10 start 0:10 end 0:50 (40 s x 8 GPUs = 320), then COMPLETED: resubmitted
#                  0:50, start 2:00 end 5:10 (190 s x 8 = 1520). JCT from the first submit: 5:10-0:10
#                  = 300, queue 0, requeues 1
#   108 PREEMPTED  submit 0:20 start 0:20 end 1:00 (40 s x 2 = 80), then COMPLETED: start 1:20 end
#                  2:20 (60 s x 2 = 120). JCT 120, queue 0, requeues 1, preemptions 1 (QOS low)
#   107 TIMEOUT    submit 0:30 start 1:00 end 4:00, AllocTRES has gres/gpu:v100=1 and gres/gpu=1
#                  (1 GPU, not 2): JCT 210, queue 30, GPU-s 180
#   103 FAILED     submit 1:00 start 1:30 end 3:20, 1 GPU, deadline 10:00 -> missed (not COMPLETED)
#                  JCT 140, queue 30, GPU-s 110 (QOS high)
#   105 RESIZING   submit 2:00 start 2:00 end 3:00, 4 GPUs (60 x 4 = 240); then COMPLETED, submitted at
#                  the resize 3:00, Start still 2:00, end 6:00, Elapsed 4:00 of which 3:00-6:00 is
#                  new: 180 x 2 = 360. JCT 240, queue 0, resizes 1, deadline 5:00 -> missed (high)
#   106 CANCELLED by 1000 while pending (no AllocTRES): counted as cancelled, not in JCT or queueing
#   104 PENDING    Start=Unknown: counted as pending only
# jobs 8: completed 4, failed 1, cancelled 1, timeout 1, pending 1
# JCT {100,120,140,210,240,300}: avg 1110/6 = 185, p50 (nearest rank 3) 140, p95 (rank 6) 300
# queueing {0,0,30,0,30,0}: avg 10, p95 30
# GPU-s 200+1840+200+180+110+600 = 3130 -> 0.869444 GPU-h; makespan 0:00 .. 6:00 = 360 s;
# utilisation with 16 GPUs 3130 / (16*360) = 0.543403; requeues 2, preemptions 1, resizes 1;
# deadlines met 1 of 3; per QOS: normal 1/1, high 0/2; per user: alice 1/2 (101, 103), dave 0/1.
# Infeasible (AdminComment infeasible=): 103 5 s after its submission (at submit), 105 180 s after
# (later). Missed: 103 and 105, 110 + 600 GPU-s.
#
# data/sacct-header.txt (a header line, a subset of the fields in another order, no Elapsed):
#   201: 0:00..1:00, 4 GPUs, deadline 1:40 met; 202: submit 0:00 start 1:00 end 3:00, 4 GPUs, missed
#   -> jobs 2, avg JCT (60+180)/2 = 120, GPU-h (240+480)/3600 = 0.2, deadlines 1/2.
set -u
export TZ=UTC
top="$(cd "${abs_top_srcdir:-${srcdir:-$(dirname "$0")/../..}}" && pwd)"
rep="$top/contribs/report/dlsched-report"
data="$top/testsuite/report/data"
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "PASS: $*"; }
ko() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Assertions on a JSON object in $tmp/out.json: d is the object.
jchk() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$tmp/out.json"; }
# Assertions on the CSV in $tmp/out.csv: r maps label -> row (a dict of column -> string).
cchk() { "$py" -c "import csv,sys; r={x['label']: x for x in csv.DictReader(open(sys.argv[1]))}; sys.exit(0 if ($1) else 1)" "$tmp/out.csv"; }
# A table row: the metric's name, then the cells.
trow() { grep -Eq "^$1 +$2\$" "$tmp/out.txt"; }
noerr() { [ ! -s "$tmp/err" ] || { echo "  stderr: $(cat "$tmp/err")"; return 1; }; }

# ---- dlsched's resizes (checkpoint and requeue, counted in AdminComment) and loaned GPU-hours ----
# Job 301: two runs on n2 (an inference node), 4 GPUs, 100 s and 200 s, one resize between them (a
# requeue that was a resize): resizes 1, requeues 0; (100 + 200) x 4 = 1200 GPU-s on n2. Job 302:
# 2 nodes (n1, n2) x 2 GPUs for 300 s: half of its 1200 GPU-s on n2. Loaned: 1800 GPU-s = 0.5 h.
cat >"$tmp/loan.txt" <<'SACCT'
JobIDRaw|State|Submit|Start|End|Elapsed|AllocTRES|NNodes|NodeList|AdminComment
301|REQUEUED|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|cpu=1,gres/gpu=4|1|n2|dl_requested=2
301|COMPLETED|2026-01-01T00:01:40|2026-01-01T00:02:00|2026-01-01T00:05:20|00:03:20|cpu=1,gres/gpu=4|1|n2|dl_requested=2 dl_resizes=1
302|COMPLETED|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:05:00|00:05:00|cpu=2,gres/gpu=4|2|n[1-2]|
SACCT
if "$rep" --from-file "$tmp/loan.txt" --inference-nodes 'n[2-3]' --format json >"$tmp/out.json" 2>"$tmp/err" && noerr; then
	jchk 'd["resizes"] == 1 and d["requeues"] == 0 and abs(d["loaned_gpu_hours"] - 0.5) < 1e-9' \
		&& ok "json: dlsched resizes 1 (not requeues), loaned GPU-hours 0.5" || ko "json: loaning: $(cat "$tmp/out.json")"
else
	ko "loaning run: $(cat "$tmp/err")"
fi
"$rep" --from-file "$tmp/loan.txt" --format json >"$tmp/out.json" 2>"$tmp/err" && jchk 'd["loaned_gpu_hours"] is None' &&
	ok "json: no --inference-nodes, no loaned GPU-hours" || ko "json without --inference-nodes: $(cat "$tmp/out.json")"

# ---- JSON ----
if "$rep" --from-file "$data/sacct.txt" --gpus-total 16 --format json >"$tmp/out.json" 2>"$tmp/err" && noerr; then
	jchk 'd["jobs"] == 8 and d["completed"] == 4 and d["failed"] == 1 and d["cancelled"] == 1 and d["timeout"] == 1 and d["pending"] == 1 and d["running"] == 0' \
		&& ok "json: job and state counts" || ko "json: job and state counts: $(cat "$tmp/out.json")"
	jchk 'd["avg_jct_s"] == 185 and d["p50_jct_s"] == 140 and d["p95_jct_s"] == 300 and d["jct_jobs"] == 6' \
		&& ok "json: avg/p50/p95 JCT 185/140/300" || ko "json: JCT: $(cat "$tmp/out.json")"
	jchk 'd["avg_queue_s"] == 10 and d["p95_queue_s"] == 30' \
		&& ok "json: queueing avg 10, p95 30" || ko "json: queueing: $(cat "$tmp/out.json")"
	jchk 'abs(d["gpu_hours"] - 3130 / 3600) < 1e-9 and d["makespan_s"] == 360 and abs(d["utilisation"] - 3130 / 5760) < 1e-9 and d["gpus_total"] == 16' \
		&& ok "json: GPU-hours 3130/3600, makespan 360, utilisation" || ko "json: GPU-hours: $(cat "$tmp/out.json")"
	jchk 'd["requeues"] == 2 and d["preemptions"] == 1 and d["resizes"] == 1' \
		&& ok "json: requeues 2, preemptions 1, resizes 1" || ko "json: requeues: $(cat "$tmp/out.json")"
	jchk 'd["deadline_jobs"] == 3 and d["deadline_met"] == 1 and abs(d["deadline_rate"] - 1 / 3) < 1e-12' \
		&& ok "json: deadlines met 1/3" || ko "json: deadlines: $(cat "$tmp/out.json")"
	jchk 'd["deadline_by_qos"] == {"high": {"jobs": 2, "met": 0, "rate": 0.0}, "normal": {"jobs": 1, "met": 1, "rate": 1.0}}' \
		&& ok "json: deadlines per QOS" || ko "json: per QOS: $(cat "$tmp/out.json")"
	jchk 'd["deadlines"]["by_user"] == {"alice": {"jobs": 2, "met": 1, "rate": 0.5}, "dave": {"jobs": 1, "met": 0, "rate": 0.0}} and d["deadlines"]["by_qos"] == d["deadline_by_qos"]' \
		&& ok "json: deadlines per user" || ko "json: per user: $(cat "$tmp/out.json")"
	jchk 'd["deadlines"]["infeasible_at_submit"] == 1 and d["deadlines"]["infeasible_later"] == 1 and d["deadlines"]["missed"] == 2 and abs(d["deadlines"]["missed_gpu_hours"] - 710 / 3600) < 1e-12' \
		&& ok "json: infeasible at submit 1, later 1, 710 GPU-s on misses" || ko "json: infeasible: $(cat "$tmp/out.json")"
	# Per QOS: low is job 108 (submitted 20 s, started 20 s, preempted, requeued, done at 140 s: JCT 120,
	# no queueing, 1 requeue); high is 103 (60 -> 90 -> 200: JCT 140, queued 30) and 105 (120 -> 120 ->
	# 360, its resize is no requeue: JCT 240): avg JCT 190, queueing avg 15, p95 30.
	jchk 'd["by_qos"]["low"] == {"jobs": 1, "avg_jct_s": 120, "avg_queue_s": 0, "p95_queue_s": 0, "requeues": 1, "deadline_met_rate": None} and d["by_qos"]["high"]["avg_jct_s"] == 190 and d["by_qos"]["high"]["avg_queue_s"] == 15 and d["by_qos"]["high"]["p95_queue_s"] == 30 and d["by_qos"]["high"]["requeues"] == 0 and d["by_qos"]["high"]["deadline_met_rate"] == 0.0' \
		&& ok "json: JCT, queueing and requeues per QOS" || ko "json: by_qos: $(cat "$tmp/out.json")"
else
	ko "json run: $(cat "$tmp/err")"
fi

# Without --gpus-total (saved output): no utilisation.
"$rep" --from-file "$data/sacct.txt" --format json >"$tmp/out.json" 2>"$tmp/err" &&
	jchk 'd["utilisation"] is None and d["gpus_total"] is None' && ok "json: no --gpus-total, no utilisation" ||
	ko "json without --gpus-total: $(cat "$tmp/err" "$tmp/out.json")"

# --json is --format json (issue 23 names it); with another --format it is refused.
"$rep" --from-file "$data/sacct.txt" --json >"$tmp/out2.json" 2>"$tmp/err" &&
	"$rep" --from-file "$data/sacct.txt" --format json >"$tmp/out.json" 2>>"$tmp/err" && cmp -s "$tmp/out.json" "$tmp/out2.json" &&
	ok "--json: the same JSON as --format json" || ko "--json: $(cat "$tmp/err")"
if "$rep" --from-file "$data/sacct.txt" --json --format csv >/dev/null 2>"$tmp/err"; then
	ko "--json --format csv was accepted"
else
	grep -q -- "--json and --format csv ask for two formats" "$tmp/err" && ok "--json with --format csv: refused, named" ||
		ko "--json --format csv: $(cat "$tmp/err")"
fi

# ---- table ----
before=$fails
if "$rep" --from-file "$data/sacct.txt" --gpus-total 16 >"$tmp/out.txt" 2>"$tmp/err" && noerr; then
	trow jobs 8 && trow completed 4 && trow failed 1 && trow pending 1 && ok "table: counts" || ko "table: counts"
	trow "avg JCT" 3.08m && trow "p50 JCT" 2.33m && trow "p95 JCT" 5.00m && ok "table: JCT in minutes" || ko "table: JCT"
	trow "avg queueing" 10.0s && trow "p95 queueing" 30.0s && ok "table: queueing in seconds" || ko "table: queueing"
	trow GPU-hours 0.87 && trow utilisation 54.3% && trow makespan 6.00m && ok "table: GPU-hours, utilisation, makespan" || ko "table: GPU-hours"
	trow requeues 2 && trow resizes 1 && trow "deadlines met" "1/3 33.3%" && trow "  QOS high" "0/2 0.0%" &&
		trow "  QOS normal" "1/1 100.0%" && ok "table: requeues, resizes, deadlines" || ko "table: requeues/deadlines"
	[ "$fails" -eq "$before" ] || sed 's/^/  | /' "$tmp/out.txt"
else
	ko "table run: $(cat "$tmp/err")"
fi
"$rep" --from-file "$data/sacct-header.txt" >"$tmp/out.txt" 2>"$tmp/err" && trow utilisation - && trow "avg JCT" 2.00m &&
	ok "table: '-' for no utilisation; a file with a header line" || ko "table of sacct-header.txt: $(cat "$tmp/err" "$tmp/out.txt")"

# ---- CSV, --compare, --chart ----
if "$rep" --compare "stock=$data/sacct.txt" "dlsched=$data/sacct-header.txt" --gpus-total 16 --format csv \
	--chart "$tmp/chart.svg" >"$tmp/out.csv" 2>"$tmp/err" && noerr; then
	head -1 "$tmp/out.csv" | grep -q '^label,jobs,completed,' && ok "csv: header row" || ko "csv: header: $(head -1 "$tmp/out.csv")"
	cchk 'list(r) == ["stock", "dlsched"] and r["stock"]["avg_jct_s"] == "185" and r["stock"]["p50_jct_s"] == "140" and r["dlsched"]["avg_jct_s"] == "120"' \
		&& ok "csv: one row per label, JCT in raw seconds" || ko "csv: JCT: $(cat "$tmp/out.csv")"
	cchk 'abs(float(r["stock"]["gpu_hours"]) - 3130 / 3600) < 1e-9 and float(r["dlsched"]["gpu_hours"]) == 0.2 and r["stock"]["requeues"] == "2"' \
		&& ok "csv: GPU-hours and requeues" || ko "csv: GPU-hours: $(cat "$tmp/out.csv")"
	cchk 'abs(float(r["stock"]["deadline_rate"]) - 1 / 3) < 1e-9 and r["dlsched"]["deadline_rate"] == "0.5" and r["stock"]["deadline_rate:high"] == "0" and r["dlsched"]["deadline_rate:high"] == ""' \
		&& ok "csv: deadline rates, overall and per QOS" || ko "csv: deadlines: $(cat "$tmp/out.csv")"
	"$py" -c 'import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
assert len(root.findall(ns + "polyline")) == 4  # two panels x two labels
texts = [t.text for t in root.iter(ns + "text")]
assert "stock" in texts and "dlsched" in texts' "$tmp/chart.svg" 2>"$tmp/err" &&
		ok "chart: well-formed SVG, two panels of two series" || ko "chart: $(cat "$tmp/err")"
else
	ko "compare run: $(cat "$tmp/err")"
fi
"$rep" --compare "stock=$data/sacct.txt" "dlsched=$data/sacct-header.txt" >"$tmp/out.txt" 2>"$tmp/err" &&
	grep -Eq '^ +stock +dlsched$' "$tmp/out.txt" && trow "avg JCT" "3.08m +2.00m" &&
	ok "compare table: one column per label" || ko "compare table: $(cat "$tmp/err" "$tmp/out.txt")"
"$rep" --compare "stock=$data/sacct.txt" "dlsched=$data/sacct-header.txt" --format json >"$tmp/out.json" 2>"$tmp/err" &&
	jchk 'list(d) == ["stock", "dlsched"] and d["dlsched"]["jobs"] == 2' && ok "compare json: one object per label" ||
	ko "compare json: $(cat "$tmp/err" "$tmp/out.json")"

# ---- selection, --save ----
"$rep" --from-file "$data/sacct.txt" --qos high --format json >"$tmp/out.json" 2>"$tmp/err" &&
	jchk 'd["jobs"] == 2 and d["avg_jct_s"] == 190 and d["deadline_rate"] == 0' && ok "--qos high: jobs 103, 105" ||
	ko "--qos: $(cat "$tmp/err" "$tmp/out.json")"
"$rep" --from-file "$data/sacct.txt" --user alice,bob --format json >"$tmp/out.json" 2>"$tmp/err" &&
	jchk 'd["jobs"] == 3 and d["avg_jct_s"] == 180' && ok "--user alice,bob: jobs 101, 102, 103" ||
	ko "--user: $(cat "$tmp/err" "$tmp/out.json")"
# Jobs still around at 3:50 (end at or after it, or not ended): 102, 104, 105, 107 -> JCT (300+240+210)/3.
"$rep" --from-file "$data/sacct.txt" --start 2026-01-01T00:03:50 --format json >"$tmp/out.json" 2>"$tmp/err" &&
	jchk 'd["jobs"] == 4 and d["avg_jct_s"] == 250' && ok "--start on saved output" ||
	ko "--start: $(cat "$tmp/err" "$tmp/out.json")"
"$rep" --from-file "$data/sacct.txt" --save "$tmp/saved.txt" >/dev/null 2>"$tmp/err" && cmp -s "$data/sacct.txt" "$tmp/saved.txt" &&
	ok "--save writes the input unchanged" || ko "--save: $(cat "$tmp/err")"

# ---- a job id reused after a slurmctld crash (data/reused.txt) ----
# 301 RUNNING with no end (a runaway: lost by the crashed slurmctld), then 301 again, another job,
# COMPLETED (JCT 30); 302 requeued once, then COMPLETED (JCT 60). Jobs 3: completed 2, running 1;
# requeues 1 (302's, not 301's); average JCT (30 + 60) / 2 = 45.
"$rep" --from-file "$data/reused.txt" --format json >"$tmp/out.json" 2>"$tmp/err" &&
	jchk 'd["jobs"] == 3 and d["completed"] == 2 and d["running"] == 1 and d["requeues"] == 1 and d["avg_jct_s"] == 45' &&
	ok "a reused job id is two jobs, a requeue is one" || ko "reused id: $(cat "$tmp/err" "$tmp/out.json")"

# ---- GPU-time lost to requeues, from a profile DB (--profile-db) ----
# Job 102's first run (0:10-0:50, 8 GPUs) saved a checkpoint at 0:48 that took 2 s (it holds the
# progress of 0:46): lost 0:46-0:50 = 4 s; its next run loaded it in 3 s at an epoch boundary and its
# first epoch took 20 s against steady 15 s: 3 + 5 = 8 s. (4 + 8) x 8 GPUs = 96 GPU-s.
# Job 108's first run (0:20-1:00, 2 GPUs) saved nothing: the whole run is lost, 40 s x 2 = 80; the
# next run loaded nothing. 105's resize is no requeue. Total 176 GPU-s = 0.048889 h, 88 per requeue.
"$py" - "$tmp/profiles.db" <<'PY'
import sqlite3, sys
t0 = 1767225600
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE epochs (cluster TEXT, job_id INTEGER, run INTEGER, epoch INTEGER, gpus INTEGER, start_s REAL, end_s REAL)")
db.execute("CREATE TABLE checkpoints (cluster TEXT, job_id INTEGER, run INTEGER, epoch REAL, kind TEXT, bytes INTEGER, seconds REAL, at_s REAL)")
ep = [(102, 0, 1, 10, 30), (102, 0, 2, 30, 45), (102, 1, 3, 120, 140), (102, 1, 4, 140, 155), (102, 1, 5, 155, 170),
      (108, 0, 1, 20, 35)]
db.executemany("INSERT INTO epochs VALUES ('dl', ?, ?, ?, 8, ?, ?)", [(j, r, e, t0 + a, t0 + b) for j, r, e, a, b in ep])
db.executemany("INSERT INTO checkpoints VALUES ('dl', 102, ?, 2, ?, 1000, ?, ?)", [(0, "save", 2, t0 + 48), (1, "load", 3, t0 + 118)])
db.commit()
PY
"$rep" --from-file "$data/sacct.txt" --profile-db "$tmp/profiles.db" --format json >"$tmp/out.json" 2>"$tmp/err" &&
	jchk 'd["preemption_loss"]["requeues"] == 2 and d["preemption_loss"]["measured"] == 2 and abs(d["preemption_loss"]["lost_gpu_s"] - 176) < 1e-6 and abs(d["preemption_loss"]["avg_lost_gpu_s"] - 88) < 1e-6' &&
	ok "--profile-db: GPU-time lost to requeues 176 GPU-s" || ko "--profile-db: $(cat "$tmp/err" "$tmp/out.json")"
"$rep" --from-file "$data/sacct.txt" --profile-db "$tmp/profiles.db" >"$tmp/out.txt" 2>"$tmp/err" &&
	trow "requeues measured" 2/2 && trow "GPU-hours lost to requeues" 0.049 && ok "--profile-db: table rows" ||
	ko "--profile-db table: $(cat "$tmp/err" "$tmp/out.txt")"

# ---- bad input: exit 2, one line naming the file and line, no traceback ----
badpath=""
bad() {  # bad NAME EXPECTED-SUBSTRING ARGS...  ($badpath: PATH for the report, to hide sacct)
	local name="$1" want="$2"
	shift 2
	env ${badpath:+PATH="$badpath"} "$rep" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$want" "$tmp/err" && ! grep -q Traceback "$tmp/err"; then
		ok "$name"
	else
		ko "$name: rc $rc, stderr: $(cat "$tmp/err")"
	fi
}
bad "malformed line: exit 2 naming file:line" "$data/bad.txt:3: 9 '|'-separated fields, expected 17" --from-file "$data/bad.txt"
sed '5s/T00:05:10|/T00:65:10|/' "$data/sacct.txt" >"$tmp/badtime.txt"
bad "bad time: exit 2 naming file:line" "$tmp/badtime.txt:5: End '2026-01-01T00:65:10' is not a sacct time" --from-file "$tmp/badtime.txt"
sed '1s/deadline=1767225900/deadline=tomorrow/' "$data/sacct.txt" >"$tmp/baddl.txt"
bad "bad deadline: exit 2 naming file:line" "$tmp/baddl.txt:1: AdminComment" --compare "a=$data/sacct.txt" "b=$tmp/baddl.txt"
bad "missing file" "$tmp/none.txt: No such file or directory" --from-file "$tmp/none.txt"
bad "unknown option" "unrecognized arguments: --bogus" --from-file "$data/sacct.txt" --bogus
bad "bad --compare" "expected LABEL=FILE" --compare "$data/sacct.txt"
bad "bad --gpus-total" "--gpus-total" --from-file "$data/sacct.txt" --gpus-total many
printf 'not a database' >"$tmp/bad.db"
bad "corrupt --profile-db" "--profile-db $tmp/bad.db: file is not a database" --from-file "$data/sacct.txt" --profile-db "$tmp/bad.db"
bad "--profile-db label unknown" "no source labelled 'x'" --compare "a=$data/sacct.txt" --profile-db "x=$tmp/profiles.db"
badpath="$tmp/empty-path" bad "sacct missing" "sacct not found" --gpus-total 8
# A run that ends (or, but after a resize, starts) before it was submitted: refused, naming the line.
sed '1s/|2026-01-01T00:01:40|00:01:40|/|2025-12-31T23:59:00|00:01:40|/' "$data/sacct.txt" >"$tmp/endearly.txt"
bad "End before Submit" "$tmp/endearly.txt:1: job 101: End 2025-12-31T23:59:00 is before Submit 2026-01-01T00:00:00" --from-file "$tmp/endearly.txt"
sed '4s/|2026-01-01T00:01:00|2026-01-01T00:04:00|/|2026-01-01T00:00:20|2026-01-01T00:04:00|/' "$data/sacct.txt" >"$tmp/startearly.txt"
bad "Start before Submit" "$tmp/startearly.txt:4: job 107: Start 2026-01-01T00:00:20 is before Submit 2026-01-01T00:00:30" --from-file "$tmp/startearly.txt"
# An option given twice is an error naming it (--profile-db alone repeats, with --compare).
bad "option given twice" "--gpus-total is given twice: give it once" --from-file "$data/sacct.txt" --gpus-total 8 --gpus-total 16
bad "--compare given twice" "--compare is given twice" --compare "a=$data/sacct.txt" --compare "b=$data/sacct.txt"
bad "--stats not a stats file" "--stats $data/sacct.txt: its first line is not plugin=sched/dlsched" --from-file "$data/sacct.txt" --stats "$data/sacct.txt"
sed 's/^guard_switches=.*/guard_switches=many/' "$data/dlsched-sched.stats" >"$tmp/badnum.stats"
bad "--stats bad number" "--stats $tmp/badnum.stats: guard_switches=many is not a number" --from-file "$data/sacct.txt" --stats "$tmp/badnum.stats"
bad "--stats missing" "--stats $tmp/none.stats: No such file or directory" --from-file "$data/sacct.txt" --stats "$tmp/none.stats"
bad "--stats label unknown" "--stats 'x=$data/dlsched-sched.stats': no source labelled 'x'" --compare "a=$data/sacct.txt" --stats "x=$data/dlsched-sched.stats"
# Empty input: a warning on stderr, and still a valid (empty) report.
: >"$tmp/empty.txt"
"$rep" --from-file "$tmp/empty.txt" --gpus-total 8 --format json >"$tmp/out.json" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && grep -qF "warning: $tmp/empty.txt: no job records" "$tmp/err" && jchk 'd["jobs"] == 0 and d["avg_jct_s"] is None'; then
	ok "empty input: warning, empty report"
else
	ko "empty input: rc $rc, stderr: $(cat "$tmp/err")"
fi

# ---- sched/dlsched's stats file (--stats): the guard's and the quotas' counters ----
# data/dlsched-sched.stats is the stats file of a real test-guard.sh run (its model path masked):
# 19 cycles, guard_choice=heuristic, guard_switches=6, guard_learned_cycles=8 (8/19 = 42%),
# guard_verdict_age_s=1, guard_status empty (the verdict decides), quota counters 0. A copy with
# borrowed_gpus=3, borrowed_gpu_s=7200 (2.00 GPU-h), quota_reclaims=2, quota_reclaimed_gpus=6,
# quota_reclaim_cost_gpu_s=1800 (0.50 GPU-h).
st="$data/dlsched-sched.stats"
sed -e 's/^borrowed_gpus=.*/borrowed_gpus=3/' -e 's/^borrowed_gpu_s=.*/borrowed_gpu_s=7200.0/' \
	-e 's/^quota_reclaims=.*/quota_reclaims=2/' -e 's/^quota_reclaimed_gpus=.*/quota_reclaimed_gpus=6/' \
	-e 's/^quota_reclaim_cost_gpu_s=.*/quota_reclaim_cost_gpu_s=1800.0/' "$st" >"$tmp/quota.stats"
if "$rep" --from-file "$data/sacct.txt" --gpus-total 16 --stats "$st" >"$tmp/out.txt" 2>"$tmp/err" && noerr; then
	trow "  guard choice" heuristic && trow "  guard switches" 6 && trow "  guard learned cycles" "8 \(42%\)" &&
		trow "  guard verdict age" 1.0s && trow "  guard status" ok && trow "  cycles" 19 &&
		trow "  quota reclaims" 0 && ok "table: the guard's section (heuristic, 6 switches, 8 (42%) learned cycles)" ||
		ko "table: stats section: $(sed -n '/sched.dlsched stats/,$p' "$tmp/out.txt")"
else
	ko "--stats run: $(cat "$tmp/err")"
fi
"$rep" --from-file "$data/sacct.txt" --stats "$tmp/quota.stats" >"$tmp/out.txt" 2>"$tmp/err" &&
	trow "  borrowed GPUs \(now\)" 3 && trow "  borrowed GPU-hours" 2.00 && trow "  quota reclaims" 2 &&
	trow "  quota reclaimed GPUs" 6 && trow "  quota reclaim cost GPU-h" 0.50 &&
	ok "table: the quotas' counters (3 GPUs, 2.00 GPU-h borrowed; 2 reclaims of 6 GPUs, 0.50 GPU-h)" ||
	ko "table: quota counters: $(sed -n '/sched.dlsched stats/,$p' "$tmp/out.txt") $(cat "$tmp/err")"
"$rep" --from-file "$data/sacct.txt" --stats "$tmp/quota.stats" --json >"$tmp/out.json" 2>"$tmp/err" &&
	jchk 'd["guard_choice"] == "heuristic" and d["guard_switches"] == 6 and d["guard_learned_cycles"] == 8 and d["guard_verdict_age_s"] == 1 and d["guard_status"] == "" and d["borrowed_gpus"] == 3 and d["borrowed_gpu_s"] == 7200 and d["quota_reclaims"] == 2 and d["quota_reclaimed_gpus"] == 6 and d["quota_reclaim_cost_gpu_s"] == 1800 and d["stats_cycles"] == 19 and d["jobs"] == 8' &&
	ok "json: guard_* and quota fields under the stats file's names" || ko "json: stats: $(cat "$tmp/out.json" "$tmp/err")"
"$rep" --from-file "$data/sacct.txt" --json >"$tmp/out.json" 2>"$tmp/err" && jchk '"guard_choice" not in d and "stats_file" not in d' &&
	ok "json: no stats fields without a stats file" || ko "json without --stats: $(cat "$tmp/err")"
"$rep" --compare "a=$data/sacct.txt" "b=$data/sacct.txt" --stats "b=$st" --format csv >"$tmp/out.csv" 2>"$tmp/err" &&
	cchk 'r["a"]["guard_switches"] == "" and r["b"]["guard_switches"] == "6" and r["b"]["guard_choice"] == "heuristic" and r["b"]["quota_reclaims"] == "0"' &&
	ok "csv: --stats LABEL=FILE with --compare (b has the counters, a none)" || ko "csv: stats: $(cat "$tmp/out.csv" "$tmp/err")"
# Live, the stats file is found where slurm.conf's StateSaveLocation says (sacct: a saved output, as
# --save wrote it, printed by a sacct on PATH; the stats file is the real one above).
mkdir -p "$tmp/bin" "$tmp/state"
cp "$st" "$tmp/state/dlsched-sched.stats"
printf 'ClusterName=x\nStateSaveLocation=%s # the controller\n' "$tmp/state" >"$tmp/slurm.conf"
printf '#!/bin/sh\ncat "%s"\n' "$data/sacct.txt" >"$tmp/bin/sacct"
chmod +x "$tmp/bin/sacct"
PATH="$tmp/bin:$PATH" SLURM_CONF="$tmp/slurm.conf" "$rep" --gpus-total 16 --json >"$tmp/out.json" 2>"$tmp/err" &&
	jchk 'd["guard_switches"] == 6 and d["stats_file"].endswith("/state/dlsched-sched.stats")' &&
	ok "live: the stats file from slurm.conf's StateSaveLocation" || ko "live stats: $(cat "$tmp/out.json" "$tmp/err")"
rm "$tmp/state/dlsched-sched.stats"
PATH="$tmp/bin:$PATH" SLURM_CONF="$tmp/slurm.conf" "$rep" --gpus-total 16 --json >"$tmp/out.json" 2>"$tmp/err" &&
	noerr && jchk '"guard_choice" not in d' && ok "live without a stats file: no section, no error" ||
	ko "live without stats: $(cat "$tmp/err")"

exit $((fails > 0))
