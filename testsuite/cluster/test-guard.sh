#!/usr/bin/env bash
# The learned policy's guard in a real slurmctld (dlsched-cluster, dlsched mode): sched/dlsched with
# Policy=dl2 (a hand-set small-first model) and GuardPolicy=fifo follows the verdict file that
# dlsched-guard would write (GuardVerdictFile=), and the queue order Slurm shows says who decides:
#  - no verdict: fifo decides (the safe side), and the log says why;
#  - choice=learned: "guard: heuristic -> learned (...)", the model's order;
#  - choice=heuristic: "guard: learned -> heuristic (...)", fifo's order; learned again;
#  - a world-writable verdict is refused (logged), and so is a stale one (older than twice
#    GuardInterval=): fifo decides;
#  - a reconfigure keeps the side followed (no switch);
#  - the stats file counts it: guard_choice, guard_switches, guard_learned_cycles, guard_verdict_age_s;
#    dlsched-report, run live, finds the stats file from slurm.conf and shows them;
#  - dlsched-guard run on this cluster (sacct of its slurmdbd) writes a verdict the plugin follows.
# About a minute. Skips (77) without root, Slurm/munge/MariaDB, the plugins, or libtorch.
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
build="$(pwd)"
tool="$top/contribs/cluster/dlsched-cluster"
mm="$build/testsuite/cluster/make-model"
. "$top/testsuite/cluster/lib.sh"  # ok, ko, slurm_order, wait_order
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
	{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
[ -f "$build/plugins/lib/sched_dlsched.so" ] ||
	{ echo "SKIP: plugins not built (configure --with-slurm-source; scripts/run-tests does it)"; exit 77; }
ldd "$build/plugins/lib/sched_dlsched.so" 2>/dev/null | grep -q libtorch && [ -x "$mm" ] ||
	{ echo "SKIP: sched/dlsched built without libtorch (configure found none): no learned policies to test"; exit 77; }

dir=$(mktemp -d /tmp/dlsched-guard-test.XXXXXX)
chmod 755 "$dir"
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
fails=0
t0=$(date +%s)
cleanup() { "$tool" down --dir "$dir/c" >/dev/null 2>&1; }
trap cleanup EXIT
profiles="$top/contribs/profiles"
verdict="$dir/verdict"
wait_log() {  # wait_log SECONDS PATTERN: until the slurmctld log has a line matching (grep -E)
	local t=0
	while [ $t -lt $(($1 * 2)) ]; do
		grep -qE "$2" "$log" && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}
# write_verdict CHOICE [AGE_S [MODE]]: as dlsched-guard writes it (a temporary file renamed over it).
write_verdict() {
	printf 'choice=%s\nat=%s\nlearned_jct=100.000\nheuristic_jct=120.000\njobs=4\nswitches=0\n' \
		"$1" "$(($(date +%s) - ${2:-0}))" >"$verdict.tmp"
	chmod "${3:-644}" "$verdict.tmp"
	mv -f "$verdict.tmp" "$verdict"
}
stat_of() { sed -n "s/^$1=//p" "$st"; }

"$mm" --out "$dir/small.pt" --prefer small || { echo "Bail out! make-model could not write the test model"; exit 1; }
gpus=(2 8 1 4)
want_learned=$("$mm" --order "$dir/small.pt" --gpus "$(IFS=,; echo "${gpus[*]}")" --profiles "$profiles" 2>/dev/null)
want_fifo="1 2 3 4"
[ "$want_learned" = "3 1 4 2" ] && ok "the model's offline order: $want_learned" || ko "offline order '$want_learned'"

{
	echo "Policy=dl2"
	echo "ModelFile=$dir/small.pt"
	echo "ModelProfiles=$profiles"
	echo "SchedInterval=1"
	echo "GuardPolicy=fifo"
	echo "GuardInterval=60"
	echo "GuardWindow=3600"
	echo "GuardVerdictFile=$verdict"
} >"$dir/dlsched.conf"
if ! "$tool" up --nodes 2 --gpus 8 --dir "$dir/c" --port-base $port --mode dlsched --no-profiling \
	--plugin-dir "$build/plugins/lib" --dlsched-conf "$dir/dlsched.conf" >"$dir/up.log" 2>&1; then
	cat "$dir/up.log"
	echo "Bail out! cluster did not come up"
	exit 1
fi
export SLURM_CONF="$dir/c/etc/slurm.conf"
log="$dir/c/log/slurmctld.log"
st="$dir/c/state/dlsched-sched.stats"

# Drained nodes: every job stays pending, and the order is all there is to see.
scontrol update NodeName=n[1-2] State=DRAIN Reason=test-guard
ids=()
for g in "${gpus[@]}"; do
	ids+=("$(sbatch --parsable -o /dev/null --gres=gpu:$g --comment "model=imagenet epochs=2 epoch_time_1gpu=60" --wrap 'sleep 1')")
done
joblist=$(IFS=,; echo "${ids[*]}")
# slurm_order, wait_order: lib.sh (the order of "${ids[@]}" in Slurm's queue).
step() {  # step NAME WANT_ORDER LOG_PATTERN STATS_CHOICE STATS_SWITCHES
	local got
	got=$(wait_order 15 "$2")
	[ "$got" = "$2" ] && ok "$1: Slurm's order $got" || ko "$1: Slurm's order '$got', want '$2'"
	wait_log 10 "$3" && ok "$1: logged ($(grep -E "$3" "$log" | tail -n1 | sed 's/.*sched\/dlsched: //'))" ||
		ko "$1: no log line /$3/: $(grep 'guard' "$log" | tail -n2 | tr '\n' ' ')"
	sleep 1.2  # the stats file is rewritten after each cycle
	[ "$(stat_of guard_choice)" = "$4" ] && [ "$(stat_of guard_switches)" = "$5" ] &&
		ok "$1: stats guard_choice=$4 guard_switches=$5 guard_learned_cycles=$(stat_of guard_learned_cycles) guard_verdict_age_s=$(stat_of guard_verdict_age_s)" ||
		ko "$1: stats $(grep '^guard_' "$st" | tr '\n' ' ')"
}

wait_log 10 "sched/dlsched: guard: on, following $verdict" && ok "guard on: $(grep -o 'guard: on.*' "$log" | head -n1)" ||
	ko "no 'guard: on' line: $(grep 'sched/dlsched' "$log" | tail -n3 | tr '\n' ' ')"
step "no verdict" "$want_fifo" "guard: no verdict in $verdict .*GuardPolicy= decides" heuristic 0
write_verdict learned
step "learned" "$want_learned" "guard: heuristic -> learned \(cycle [0-9]+: verdict of [0-9]+ s ago" learned 1
learned_cycles=$(stat_of guard_learned_cycles)
age=$(stat_of guard_verdict_age_s)
[ "${learned_cycles:-0}" -ge 1 ] && [ "${age:--1}" -ge 0 ] && [ "${age:-99}" -le 30 ] &&
	ok "learned cycles counted ($learned_cycles), verdict age ${age} s" || ko "learned cycles '$learned_cycles', age '$age'"
write_verdict heuristic
step "heuristic" "$want_fifo" "guard: learned -> heuristic \(cycle" heuristic 2
write_verdict learned
step "learned again" "$want_learned" "guard: heuristic -> learned .*" learned 3
# A reconfigure builds the schedulers afresh but is not a switch: the learned side stays. From 23.11
# it starts a new slurmctld (SLURM-NOTES.md), whose counters start from zero: there the learned side
# is where the new process starts ("decides from the start"), again no switch.
pid0=$(cat "$dir/c/pids/slurmctld.pid")
n0=$(wc -l <"$log")
scontrol reconfigure
sleep 3
wait_for 30 scontrol ping >/dev/null
pid1=$(cat "$dir/c/pids/slurmctld.pid")
sw=3
[ "$pid1" = "$pid0" ] || { sw=0; echo "# reconfigure started a new slurmctld ($pid0 -> $pid1): counters from zero"; }
sleep 1.2
[ "$(grep -c "sched/dlsched: guard: on, following $verdict" "$log")" -ge 2 ] && [ "$(stat_of guard_choice)" = learned ] &&
	[ "$(stat_of guard_switches)" = $sw ] && [ "$(wait_order 5 "$want_learned")" = "$want_learned" ] &&
	ok "reconfigure: still learned, no switch counted" || ko "reconfigure: $(grep '^guard_' "$st" | tr '\n' ' ')"
if [ "$sw" = 0 ]; then
	after=$(tail -n +$((n0 + 1)) "$log")	# the new slurmctld's lines
	grep -q "guard: learned decides from the start" <<<"$after" && ! grep -q "guard: heuristic -> learned" <<<"$after" &&
		ok "the new slurmctld logs where it starts, not a switch" || ko "the new slurmctld's guard lines: $(grep 'guard:' <<<"$after" | tr '\n' ' ')"
fi
# A verdict others may write is refused: anyone could hand the cluster to the learned policy.
write_verdict learned 0 666
step "world-writable" "$want_fifo" "guard: $verdict is writable by others than its owner.*refused; GuardPolicy= decides" heuristic $((sw + 1))
grep -qE "guard: learned -> heuristic \(cycle [0-9]+: $verdict is writable by others" "$log" &&
	ok "the switch names the refusal" || ko "no switch line naming the refusal"
write_verdict learned
step "trusted again" "$want_learned" "guard: following $verdict again" learned $((sw + 2))
# Stale: evaluated 200 s ago, GuardInterval=60.
write_verdict learned 200
step "stale" "$want_fifo" "guard: evaluated [0-9]+ s ago, more than twice GuardInterval=60.*GuardPolicy= decides" heuristic $((sw + 3))

# dlsched-guard itself, reading this cluster's accounting (sacct): the verdict it writes is followed.
guard="$build/contribs/guard/dlsched-guard"
if [ -x "$guard" ]; then
	if "$guard" --config "$dir/dlsched.conf" --cluster 2x8 >"$dir/guard.out" 2>&1; then
		choice=$(sed -n 's/^choice=//p' "$verdict")
		jobs=$(sed -n 's/^jobs=//p' "$verdict")
		[ "$jobs" = ${#ids[@]} ] && ok "dlsched-guard read the ${#ids[@]} pending jobs from sacct: $(cat "$dir/guard.out")" ||
			ko "dlsched-guard replayed '$jobs' jobs, want ${#ids[@]}: $(cat "$dir/guard.out")"
		want=$([ "$choice" = learned ] && echo "$want_learned" || echo "$want_fifo")
		got=$(wait_order 15 "$want")
		sleep 1.2
		[ "$got" = "$want" ] && [ "$(stat_of guard_choice)" = "$choice" ] && [ -z "$(stat_of guard_status)" ] &&
			ok "sched/dlsched follows dlsched-guard's verdict ($choice, order $got)" ||
			ko "dlsched-guard's verdict '$choice': order '$got', stats $(grep '^guard_' "$st" | tr '\n' ' ')"
	else
		ko "dlsched-guard failed: $(cat "$dir/guard.out")"
	fi
else
	echo "# dlsched-guard not built: its run on this cluster skipped"
fi
# dlsched-report, live on this cluster: sacct, and the stats file found from slurm.conf's
# StateSaveLocation, with the counters the stats file has now.
"$top/contribs/report/dlsched-report" --gpus-total 16 --json >"$dir/report.json" 2>"$dir/report.err" &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if d["stats_file"] == sys.argv[2] and d["guard_switches"] >= 3 and d["guard_choice"] in ("learned", "heuristic") and d["jobs"] >= 1 else 1)' \
		"$dir/report.json" "$st" &&
	ok "dlsched-report (live) shows the guard's counters from $st: $(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(*(k + "=" + str(d[k]) for k in ("guard_choice", "guard_switches", "guard_learned_cycles")))' "$dir/report.json")" ||
	ko "dlsched-report live: $(cat "$dir/report.err"; head -c 300 "$dir/report.json")"
scontrol ping | grep -q UP && ok "slurmctld up" || ko "slurmctld down"

echo "test-guard: $(($(date +%s) - t0)) s"
[ $fails -eq 0 ] && echo "all guard checks passed" || echo "$fails guard check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; cleanup; rm -rf "$dir"; }
exit $((fails > 0))
