#!/usr/bin/env bash
# dlsched-guard(1) on a recorded history (testsuite/data/guard_sacct.txt, sacct -X -P output of a
# 1x8 cluster), evaluated at 2026-11-23T12:00:00Z with GuardWindow=3600:
#  - jobs=5: 102, 103 (finished), 104 (running), 105 (pending) and 106; not 101 (submitted before the
#    window), 107 (no GPUs), 108 (submitted after the evaluation), nor the step 102.batch;
#  - both replays ran (each average JCT at least the shortest job's 300 s), and the choice is the
#    guard's rule applied to them from GuardPolicy= (learned only when more than GuardMargin= better);
#  - the verdict and state files are written whole, mode 0644, and the state carries to the next run;
#  - GuardMargin=1 keeps the heuristic; a heuristic Policy=, a bad history line, a corrupt state file
#    are errors that name the input.
# About 10 s on one core (four replays of five jobs with dl2). Skips without libtorch.
set -uo pipefail
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
build="${abs_top_builddir:-$top/_build}"
guard="$build/contribs/guard/dlsched-guard"
if [ ! -x "$guard" ]; then
	echo "SKIP: dlsched-guard not built (configure found no libtorch)"
	exit 77
fi
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
export DLSCHED_DATADIR="$top/contribs"
hist="$top/testsuite/data/guard_sacct.txt"
now=1795435200 # 2026-11-23T12:00:00Z
conf() {       # conf EXTRA...: a dl2 configuration with a one-hour window
	{
		echo "Policy=dl2"
		echo "ModelFile=$top/models/dl2.pt"
		echo "GuardInterval=1800"
		echo "GuardWindow=3600"
		echo "GuardVerdictFile=$t/verdict"
		for l in "$@"; do echo "$l"; done
	} >"$t/dlsched.conf"
}
val() { sed -n "s/^$1=//p" "$2"; } # val KEY FILE

conf
if "$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >"$t/out" 2>"$t/err"; then
	ok "evaluated: $(cat "$t/out")"
else
	bad "dlsched-guard failed: $(cat "$t/err")"
fi
[ "$(val jobs "$t/verdict")" = 5 ] && ok "5 jobs replayed (finished, running, pending; none from the future)" \
	|| bad "jobs=$(val jobs "$t/verdict") (want 5)"
[ "$(val at "$t/verdict")" = "$now" ] && ok "at=$now" || bad "at=$(val at "$t/verdict")"
learned="$(val learned_jct "$t/verdict")"
heuristic="$(val heuristic_jct "$t/verdict")"
choice="$(val choice "$t/verdict")"
want="$(python3 -c 'import sys; l,h=map(float,sys.argv[1:]); print("learned" if l < h*(1-0.02) else "heuristic")' \
	"$learned" "$heuristic")"
python3 -c 'import sys; l,h=map(float,sys.argv[1:]); sys.exit(0 if l >= 300 and h >= 300 else 1)' "$learned" "$heuristic" \
	&& ok "both replays ran: dl2 ${learned} s, mckp ${heuristic} s" || bad "replays: dl2 ${learned} s, mckp ${heuristic} s"
[ "$choice" = "$want" ] && ok "choice=$choice follows the rule from GuardPolicy=" || bad "choice=$choice, the rule says $want"
[ "$(stat -c %a "$t/verdict")" = 644 ] && [ "$(stat -c %a "$t/verdict.state")" = 644 ] && ok "verdict and state mode 0644" \
	|| bad "modes $(stat -c %a "$t/verdict" "$t/verdict.state")"
[ -z "$(ls "$t" | grep -E 'verdict\..{6}$')" ] && ok "no temporary file left" || bad "left: $(ls "$t")"
[ "$(val evaluations "$t/verdict.state")" = 1 ] && [ "$(val choice "$t/verdict.state")" = "$choice" ] \
	&& ok "state: 1 evaluation, choice=$choice" || bad "state: $(cat "$t/verdict.state")"

# The next run starts from the state: the learned side keeps the cluster unless the heuristic is better.
printf 'choice=learned\nswitches=4\nevaluations=7\nat=%s\n' "$((now - 1800))" >"$t/verdict.state"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >"$t/out2" 2>"$t/err" || bad "second run: $(cat "$t/err")"
want="$(python3 -c 'import sys; l,h=map(float,sys.argv[1:]); print("heuristic" if h < l else "learned")' "$learned" "$heuristic")"
sw=$([ "$want" = heuristic ] && echo 5 || echo 4)
[ "$(val choice "$t/verdict")" = "$want" ] && [ "$(val switches "$t/verdict")" = "$sw" ] && [ "$(val evaluations "$t/verdict.state")" = 8 ] \
	&& ok "from learned: choice=$want, switches=$sw, evaluations=8" || bad "from learned: $(cat "$t/verdict" "$t/verdict.state")"

# GuardMargin=1: the learned policy can never win by 100%.
rm -f "$t/verdict.state"
conf "GuardMargin=1"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >/dev/null 2>"$t/err" \
	&& [ "$(val choice "$t/verdict")" = heuristic ] && ok "GuardMargin=1 keeps the heuristic" || bad "GuardMargin=1: $(cat "$t/verdict" "$t/err")"

# Errors name the input; no verdict is written.
rm -f "$t/verdict" "$t/verdict.state"
conf
sed -i 's/^Policy=dl2/Policy=srtf/' "$t/dlsched.conf"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >/dev/null 2>"$t/err"
[ $? = 1 ] && grep -q "nothing to guard" "$t/err" && [ ! -e "$t/verdict" ] && ok "a heuristic policy: $(cat "$t/err")" \
	|| bad "heuristic policy: $(cat "$t/err")"
conf
{ cat "$hist"; echo "109|yesterday|Unknown|Unknown||gres/gpu=1||x"; } >"$t/bad.txt"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$t/bad.txt" --now "$now" >/dev/null 2>"$t/err"
[ $? = 1 ] && grep -q "bad.txt:11: Submit 'yesterday'" "$t/err" && [ ! -e "$t/verdict" ] && ok "a bad line: $(cat "$t/err")" \
	|| bad "bad line: $(cat "$t/err")"
echo "winner=dl2" >"$t/verdict.state"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >/dev/null 2>"$t/err"
[ $? = 1 ] && grep -q "verdict.state:1: 'winner=dl2' is not a state line" "$t/err" && ok "a corrupt state file: $(cat "$t/err")" \
	|| bad "corrupt state: $(cat "$t/err")"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --now soon >/dev/null 2>&1
[ $? = 2 ] && ok "--now soon is a usage error" || bad "--now soon"

[ "$fails" -eq 0 ] && echo "PASS" || echo "FAIL: $fails"
[ "$fails" -eq 0 ]
