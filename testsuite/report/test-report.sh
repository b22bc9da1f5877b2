#!/usr/bin/env bash
# dlsched-report on a hand-written sacct output (times in local time; TZ pinned to UTC):
#  job 1: submit 0, end 100 s, 2 GPUs, deadline 00:05:00 -> met     (JCT 100)
#  job 2: requeued once: runs 10..50 (8 GPUs) and 120..310 (8 GPUs) (JCT 300)
#  job 3: FAILED at 200 s (submit 60, JCT 140), 1 GPU, deadline 00:01:40 -> missed
#  job 4: pending.
# avg JCT (finished: 1, 2, 3) = (100 + 300 + 140) / 3 = 180 s; p50 = 140; GPU-s = 200 + 320 + 1520 +
# 110 = 2150 -> 0.597 GPU-h; requeues 1; deadlines met 1 of 2 = 50%; queueing: 0, 0, 30 -> avg 10.
set -u
export TZ=UTC
top="$(cd "${srcdir:-.}" && pwd)"
rep="$top/contribs/report/dlsched-report"
data="$top/testsuite/report/data/sacct.txt"
fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
j=$("$rep" --from-file "$data" --format json --gpus-total 16)
chk() { /usr/bin/python3 -c "import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if $1 else 1)" "$j"; }
chk 'd["jobs"] == 4 and d["completed"] == 2' && ok "job counts" || ko "job counts: $j"
chk 'abs(d["avg_jct_s"] - 180) < 1e-9 and d["p50_jct_s"] == 140' && ok "avg and p50 JCT" || ko "JCT: $j"
chk 'abs(d["gpu_hours"] - 2150 / 3600) < 1e-9' && ok "GPU-hours" || ko "GPU-hours: $j"
chk 'd["requeues"] == 1 and d["deadline_rate"] == 0.5 and abs(d["avg_queue_s"] - 10) < 1e-9' && ok "requeues, deadlines, queueing" || ko "$j"
chk 'd["deadline_rate_by_qos"] == {"normal": 1.0, "high": 0.0}' && ok "deadline rate per QOS" || ko "per QOS: $j"
t=$("$rep" --from-file "$data")
echo "$t" | grep -q "^avg JCT *3.0m$" && ok "table shows 3.0m" || ko "table: $t"
c=$("$rep" --compare "a=$data" "b=$data" --format csv --chart /tmp/report-test-$$.svg 2>/dev/null)
echo "$c" | grep -q "^avg_jct_s,180,180$" && ok "compare CSV" || ko "csv: $c"
/usr/bin/python3 -c "import xml.etree.ElementTree as E, sys; E.parse(sys.argv[1])" /tmp/report-test-$$.svg && ok "SVG is well-formed" || ko "bad SVG"
rm -f /tmp/report-test-$$.svg
printf '1|COMPLETED|x\n' >/tmp/report-bad-$$.txt
err=$("$rep" --from-file /tmp/report-bad-$$.txt 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == *"report-bad-$$.txt:1:"* ]] && ok "malformed line: exit 2 naming file:line" || ko "bad input: rc $rc, $err"
rm -f /tmp/report-bad-$$.txt
exit $((fails > 0))
