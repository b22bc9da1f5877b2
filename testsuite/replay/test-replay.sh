#!/usr/bin/env bash
# Recorded cycles as tests: each FILE (default: the view-*.json recordings in testsuite/replay/,
# written by sched/dlsched with DumpViews= on a real cluster) is decided again by
# `dlsched-sim decide --view FILE` through the C ABI; its decisions must equal the recorded ones,
# field for field. Run by make check, and by testsuite/cluster/test-preemption.sh on the views its
# own cluster just recorded.
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
sim="${DLSCHED_SIM:-$(pwd)/contribs/sim/dlsched-sim}"
[ -x "$sim" ] || { echo "Bail out! $sim not built (make)"; exit 99; }
if [ $# -eq 0 ]; then
	set -- "$top"/testsuite/replay/view-*.json
	[ -e "$1" ] || { echo "Bail out! no recordings in $top/testsuite/replay"; exit 99; }
fi
tmp=$(mktemp -d /tmp/dlsched-replay-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
for f in "$@"; do
	n=$((n + 1))
	name=$(basename "$f")
	if ! "$sim" decide --view "$f" --profiles "$top/contribs/profiles" >"$tmp/out" 2>"$tmp/err"; then
		echo "not ok $n - $name: dlsched-sim decide failed: $(cat "$tmp/err")"
		fails=$((fails + 1))
		continue
	fi
	if msg=$(python3 - "$f" "$tmp/out" <<'PY'
import json, sys
recorded = json.load(open(sys.argv[1]))["decisions"]
replayed = json.load(open(sys.argv[2]))
if recorded == replayed:
    kinds = {0: "priority", 1: "start", 2: "resize", 3: "requeue", 4: "loan", 5: "reclaim", 6: "admission"}
    seen = {}
    for a in recorded["actions"]:
        k = kinds.get(a["kind"], str(a["kind"]))
        seen[k] = seen.get(k, 0) + 1
    print(", ".join(f"{v} {k}" for k, v in sorted(seen.items())) or "no actions")
    sys.exit(0)
ra, pa = recorded["actions"], replayed["actions"]
for i in range(max(len(ra), len(pa))):
    a = ra[i] if i < len(ra) else None
    b = pa[i] if i < len(pa) else None
    if a != b:
        print(f"action {i}: recorded {json.dumps(a)}, replayed {json.dumps(b)}")
        break
else:
    print(f"order: recorded {recorded['order']}, replayed {replayed['order']}")
sys.exit(1)
PY
	); then
		echo "ok $n - $name replays to the recorded decisions ($msg)"
	else
		echo "not ok $n - $name: $msg"
		fails=$((fails + 1))
	fi
done
echo "1..$n"
exit $((fails > 0))
