#!/usr/bin/env bash
# One set of metric definitions (doc/metrics.md): the same job outcomes (outcomes.csv) through
# dlsched-sim's metrics (metrics-json, the code behind `dlsched-sim run --json`) and through
# dlsched-report (the outcomes written as the sacct records a cluster would leave, to-sacct.py) must
# give the same figures under the same names, overall and per QOS. Fails on any difference, naming
# the key and both values.
set -u
export TZ=UTC
top="$(cd "${abs_top_srcdir:-${srcdir:-$(dirname "$0")/../..}}" && pwd)"
build="${abs_top_builddir:-$top/_build}"
here="$top/testsuite/metrics"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sim_json="$build/testsuite/metrics/metrics-json"
[ -x "$sim_json" ] || { echo "Bail out! $sim_json not built (make check builds it)"; exit 99; }
"$sim_json" "$here/outcomes.csv" >"$tmp/sim.json" || { echo "FAIL: metrics-json"; exit 1; }
/usr/bin/python3 "$here/to-sacct.py" "$here/outcomes.csv" >"$tmp/sacct.txt" || { echo "FAIL: to-sacct.py"; exit 1; }
"$top/contribs/report/dlsched-report" --from-file "$tmp/sacct.txt" --format json >"$tmp/report.json" ||
	{ echo "FAIL: dlsched-report"; exit 1; }
/usr/bin/python3 - "$tmp/sim.json" "$tmp/report.json" <<'PY'
import json, sys
sim, rep = (json.load(open(p)) for p in sys.argv[1:3])
TOP = ["jobs", "avg_jct_s", "p50_jct_s", "p95_jct_s", "p99_jct_s", "avg_queue_s", "makespan_s", "requeues",
       "resizes", "restarts", "deadline_met_rate"]
QOS = ["jobs", "avg_jct_s", "avg_queue_s", "p95_queue_s", "deadline_met_rate"]
fails = 0
def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))
def check(where, a, b):
    global fails
    if same(a, b):
        print(f"ok - {where} = {a}")
    else:
        print(f"not ok - {where}: dlsched-sim {a}, dlsched-report {b}")
        fails += 1
for k in TOP:
    check(k, sim.get(k), rep.get(k))
if sorted(sim["by_qos"]) != sorted(rep["by_qos"]):
    print(f"not ok - by_qos names: dlsched-sim {sorted(sim['by_qos'])}, dlsched-report {sorted(rep['by_qos'])}")
    fails += 1
for q in sorted(set(sim["by_qos"]) & set(rep["by_qos"])):
    for k in QOS:
        check(f"by_qos.{q}.{k}", sim["by_qos"][q].get(k), rep["by_qos"][q].get(k))
# The fixture must exercise what differed before: requeues, resizes, a job that never ran, deadlines.
if not (sim["requeues"] and sim["resizes"] and sim["cancelled"] and sim["deadline_met_rate"] not in (None, 0, 1)):
    print("not ok - the fixture no longer has requeues, resizes, a cancelled job and met and missed deadlines")
    fails += 1
sys.exit(1 if fails else 0)
PY
rc=$?
# dlsched-agreement takes the cluster's side from dlsched-report (not from its own parsing of sacct).
"$top/contribs/agreement/dlsched-agreement" --workload "$top/testsuite/data/philly_small.csv" --cluster 2x8 \
	--policy srtf --speedup 10 --sacct "$tmp/sacct.txt" --sim "$build/contribs/sim/dlsched-sim" \
	--profiles "$top/contribs/profiles" --json "$tmp/agreement.json" >"$tmp/agreement.out" 2>&1 || rc=1
/usr/bin/python3 - "$tmp/agreement.json" "$tmp/report.json" <<'PY' || rc=1
import json, sys
ag, rep = (json.load(open(p)) for p in sys.argv[1:3])
want = {"cluster_avg_jct_s": rep["avg_jct_s"] * 10, "cluster_jobs": rep["jct_jobs"],
        "cluster_restarts": rep["restarts"], "cluster_resizes": rep["resizes"]}
bad = {k: (ag.get(k), v) for k, v in want.items() if ag.get(k) is None or abs(ag[k] - v) > 1e-6}
print("ok - dlsched-agreement reads dlsched-report's figures" if not bad else f"not ok - dlsched-agreement: {bad}")
sys.exit(1 if bad else 0)
PY
ls / | grep -q '^tmp\.sim-\|^\.sim-' && { echo "not ok - dlsched-agreement left a file in /"; rc=1; }
[ $rc -eq 0 ] && echo "PASS: dlsched-sim and dlsched-report agree on outcomes.csv" || echo "FAIL: the two disagree (above)"
exit $rc
