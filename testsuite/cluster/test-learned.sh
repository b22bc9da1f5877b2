#!/usr/bin/env bash
# The learned ordering (Policy=dl2) inside a real slurmctld (dlsched-cluster, dlsched mode):
#  - sched/dlsched loads the model named by ModelFile= and logs which (a "note:" line);
#  - the queue order Slurm shows (squeue %Q) is the order the same model gives offline through the
#    same C ABI (make-model --order), for two hand-set models with opposite preferences;
#  - RecordExperience=yes fills the profile DB's experience table, and the recorded action is the
#    order Slurm shows;
#  - scontrol reconfigure with another ModelFile= swaps the model: in the same slurmctld up to Slurm
#    23.02, in the new process that reconfigure starts from 23.11 on (libtorch and the model loaded
#    again there); either way the log names the new model and the order flips; an unwritable
#    ProfileDB= is logged and costs the cycle nothing;
#  - an empty ModelFile= loads the shipped model; a missing or corrupt model file, or one that
#    others than its owner may write, falls back to ModelFallback= with the reason logged (an error
#    naming the file and the fix, for the last), and jobs still run;
#  - select/dlsched_cons_tres (no libtorch) builds the preset's placement with the fallback
#    ordering standing in, and logs so;
#  - advisor mode (site_factor/dlsched, no libtorch) refuses Policy=dl2 with a clear logged error,
#    and Slurm schedules alone.
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, or a sched/dlsched built with libtorch.
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
build="$(pwd)"
tool="$top/contribs/cluster/dlsched-cluster"
mm="$build/testsuite/cluster/make-model"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
	{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
[ -f "$build/plugins/lib/sched_dlsched.so" ] ||
	{ echo "SKIP: plugins not built (configure --with-slurm-source; scripts/run-tests does it)"; exit 77; }
ldd "$build/plugins/lib/sched_dlsched.so" 2>/dev/null | grep -q libtorch && [ -x "$mm" ] ||
	{ echo "SKIP: sched/dlsched built without libtorch (configure found none): no learned policies to test"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is missing (apt-get install sqlite3)"; exit 77; }

dir=$(mktemp -d /tmp/dlsched-learned-test.XXXXXX)
chmod 755 "$dir"
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
fails=0
t0=$(date +%s)
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() { "$tool" down --dir "$dir/c" >/dev/null 2>&1; "$tool" down --dir "$dir/a" >/dev/null 2>&1; }
trap cleanup EXIT
profiles="$top/contribs/profiles"
exp="$dir/experience.db"
write_conf() {  # write_conf FILE KEY=VALUE...
	local f="$1"
	shift
	{ echo "Policy=dl2"; echo "LearnedGuard=no"; echo "SchedInterval=1"; echo "ModelProfiles=$profiles"; printf '%s\n' "$@"; } >"$f"
}
. "$top/testsuite/cluster/lib.sh"  # wait_done, completed
wait_log() {  # wait_log SECONDS PATTERN: until the slurmctld log has a line matching (grep -E)
	local t=0
	while [ $t -lt $(($1 * 2)) ]; do
		grep -qE "$2" "$log" && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}

# Two hand-set models with opposite preferences (fewest GPUs first, most GPUs first): their scores
# depend on the GPU count only, so the offline order is exact whatever the clock.
"$mm" --out "$dir/small.pt" --prefer small && "$mm" --out "$dir/large.pt" --prefer large ||
	{ echo "Bail out! make-model could not write the test models"; exit 1; }
gpus=(2 8 1 4)
offline() { "$mm" --order "$1" --gpus "$(IFS=,; echo "${gpus[*]}")" --profiles "$profiles" 2>/dev/null; }
want_small=$(offline "$dir/small.pt") want_large=$(offline "$dir/large.pt") want_fallback=$(offline "$dir/missing.pt")
[ "$want_small" = "3 1 4 2" ] && [ "$want_large" = "2 4 1 3" ] && [ -n "$want_fallback" ] &&
	ok "offline orders: small-first $want_small, large-first $want_large, fallback $want_fallback" ||
	ko "offline orders: small-first '$want_small', large-first '$want_large', fallback '$want_fallback'"

write_conf "$dir/dlsched.conf" "ModelFile=$dir/small.pt" "ProfileDB=$exp" "RecordExperience=yes"
if ! "$tool" up --nodes 2 --gpus 8 --dir "$dir/c" --port-base $port --mode dlsched --no-profiling \
	--plugin-dir "$build/plugins/lib" --dlsched-conf "$dir/dlsched.conf" >"$dir/up.log" 2>&1; then
	cat "$dir/up.log"
	echo "Bail out! cluster did not come up"
	exit 1
fi
export SLURM_CONF="$dir/c/etc/slurm.conf"
log="$dir/c/log/slurmctld.log"
st="$dir/c/state/dlsched-sched.stats"
ctld_pid=$(cat "$dir/c/pids/slurmctld.pid")
wait_log 10 "sched/dlsched: note: dl2: model $dir/small.pt \(" &&
	ok "sched/dlsched loaded the model ($(grep -o "note: dl2: model $dir/small.pt ([^)]*)" "$log" | head -n1))" ||
	ko "no note naming $dir/small.pt in the slurmctld log: $(grep 'sched/dlsched' "$log" | tail -n3)"
grep -q "sched/dlsched: note: experience: every cycle a learned ordering decides is appended to $exp (cluster dlsched)" "$log" &&
	ok "experience recording announced" || ko "no experience note in the log"

# ---- the queue order follows the model: drained nodes, so that every job stays pending ----
scontrol update NodeName=n[1-2] State=DRAIN Reason=test-learned
ids=()
for g in "${gpus[@]}"; do
	ids+=("$(sbatch --parsable -o /dev/null --gres=gpu:$g --comment "model=imagenet epochs=2 epoch_time_1gpu=60" --wrap 'sleep 1')")
done
joblist=$(IFS=,; echo "${ids[*]}")
# slurm_order, wait_order: lib.sh (the order of "${ids[@]}" in Slurm's queue).
got=$(wait_order 15 "$want_small")
[ "$got" = "$want_small" ] && ok "Slurm's queue order is the small-first model's offline order ($got)" ||
	ko "Slurm's order '$got', the model's offline order '$want_small' ($(squeue -h -j "$joblist" -o '%i %Q %r' | tr '\n' ';'))"

# ---- experience: rows in the profile DB, the recorded action is the order Slurm shows ----
sleep 1.5
n_rows=$(sqlite3 "$exp" "SELECT count(*) FROM experience WHERE cluster = 'dlsched'" 2>&1)
[ "${n_rows:-0}" -gt 0 ] 2>/dev/null && ok "RecordExperience=yes: $n_rows experience rows in $exp" ||
	ko "experience rows: '$n_rows'"
# The learned allocation records its round: one row per job's first unit and the end row (unit -1);
# with every node down no unit fits, so the round's one pick is the end row (row 4).
last5="SELECT state, action, reward FROM experience WHERE json_extract(state, '\$.rows') = 5 ORDER BY rowid DESC LIMIT 1"
rec=$(sqlite3 "$exp" "SELECT group_concat(id, ' ') FROM (SELECT CAST(u.value AS TEXT) AS id
	FROM ($last5) s, json_each(s.state, '\$.ids') u WHERE u.value > 0 ORDER BY u.value)" 2>&1)
units=$(sqlite3 "$exp" "SELECT group_concat(u.value, ' ') FROM ($last5) s, json_each(s.state, '\$.unit') u" 2>&1)
picks=$(sqlite3 "$exp" "SELECT json_extract(action, '\$.order') FROM ($last5)" 2>&1)
reward=$(sqlite3 "$exp" "SELECT reward FROM ($last5)" 2>&1)
want_ids=$(printf '%s\n' "${ids[@]}" | sort -n | paste -sd' ')
[ "$rec" = "$want_ids" ] && [ "$units" = "0 0 0 0 -1" ] && [ "$picks" = "[4]" ] && [ "$reward" = "-4.0" ] &&
	ok "the recorded round: the 4 jobs' first units and the end row ($units), the end its only pick on down nodes, reward -in_system ($reward)" ||
	ko "recorded round: jobs '$rec' (want '$want_ids'), units '$units', picks '$picks' (want [4]), reward '$reward' (want -4.0)"
grep -q "^experience_rows=[1-9]" "$st" && grep -q "^experience_errors=0$" "$st" && grep -q "^notes=dl2: model $dir/small.pt" "$st" &&
	ok "stats file: experience rows, no errors, the notes" || ko "stats: $(grep -E '^(notes|experience)' "$st" | tr '\n' ' ')"

# ---- scontrol reconfigure swaps the model; an unwritable ProfileDB costs the cycle nothing ----
# Up to Slurm 23.02 reconfigure reloads the plugins' configuration in the running slurmctld; from
# 23.11 it starts a new slurmctld (fork and exec: a new pid), where every plugin's init() runs again.
# What matters on every release: the slurmctld that answers afterwards has libtorch mapped and
# loaded the new model (after it started, when it is a new process), and orders by it.
write_conf "$dir/c/etc/dlsched.conf" "ModelFile=$dir/large.pt" "ProfileDB=$dir/nodir/x.db" "RecordExperience=yes"
lines=$(wc -l <"$log")
scontrol reconfigure
wait_log 10 "sched/dlsched: note: dl2: model $dir/large.pt \(" && ok "reconfigure: the log names the new model" ||
	ko "no note naming $dir/large.pt after reconfigure"
got=$(wait_order 15 "$want_large")
[ "$got" = "$want_large" ] && ok "the order flipped with the large-first model ($got)" ||
	ko "order after the swap '$got', want '$want_large'"
now_pid=$(cat "$dir/c/pids/slurmctld.pid" 2>/dev/null)
# In the log since the reconfigure: the line of the model note, and that of a slurmctld start.
at() { tail -n +"$((lines + 1))" "$log" | grep -nE "$1" | head -n1 | cut -d: -f1; }
note_at=$(at "sched/dlsched: note: dl2: model $dir/large.pt \(") start_at=$(at "slurmctld version .* started")
if ! kill -0 "${now_pid:-0}" 2>/dev/null || ! grep -q libtorch "/proc/$now_pid/maps" 2>/dev/null; then
	ko "after reconfigure: slurmctld pid '$now_pid' is not running or has no libtorch mapped"
elif [ "$now_pid" = "$ctld_pid" ]; then
	[ -z "$start_at" ] && ok "same slurmctld (pid $ctld_pid, libtorch mapped): the model was swapped in place" ||
		ko "pid $ctld_pid kept, yet the log has a slurmctld start since the reconfigure"
else
	[ -n "$start_at" ] && [ -n "$note_at" ] && [ "$note_at" -gt "$start_at" ] &&
		ok "reconfigure restarted slurmctld (pid $ctld_pid -> $now_pid): libtorch mapped and the model loaded again in the new process" ||
		ko "new slurmctld $now_pid: start at log line '+$start_at', model note at '+$note_at' since the reconfigure"
fi
wait_log 10 "sched/dlsched: cycle [0-9]+: experience not recorded \($dir/nodir/x.db" &&
	ok "an unwritable ProfileDB= is logged, and the cycles go on" || ko "no error logged for $dir/nodir/x.db"
grep -q "^experience_errors=[1-9]" "$st" && ok "stats file counts experience errors" ||
	ko "stats: $(grep -E '^(experience|last_exp)' "$st" | tr '\n' ' ')"

# ---- no ModelFile=: the shipped model (installed, else the source tree's models/dl2.pt) ----
if [ -f "$top/models/dl2.pt" ]; then
	write_conf "$dir/c/etc/dlsched.conf"
	scontrol reconfigure
	wait_log 10 "sched/dlsched: note: dl2: model [^ ]*/dl2\.pt \(" &&
		ok "empty ModelFile=: the shipped model ($(grep -o 'note: dl2: model [^ ]*/dl2\.pt' "$log" | tail -n1 | cut -d' ' -f4))" ||
		ko "empty ModelFile= did not load the shipped model: $(grep 'note: dl2' "$log" | tail -n1)"
fi

# ---- a missing, then a corrupt model: ModelFallback with the reason logged; jobs still run ----
rows_before=$(sqlite3 "$exp" "SELECT count(*) FROM experience")
write_conf "$dir/c/etc/dlsched.conf" "ModelFile=$dir/missing.pt" "ProfileDB=$exp" "RecordExperience=yes"
scontrol reconfigure
wait_log 10 "sched/dlsched: note: dl2: $dir/missing.pt: model file not found.*; ordering by tiresias-las instead" &&
	ok "missing model: the fallback and its reason are logged" ||
	ko "no fallback note for $dir/missing.pt: $(grep 'note:' "$log" | tail -n2)"
got=$(wait_order 15 "$want_fallback")
[ "$got" = "$want_fallback" ] && ok "under the fallback the order is tiresias-las's ($got)" ||
	ko "order under the fallback '$got', want '$want_fallback'"
echo "not a model" >"$dir/corrupt.pt"
write_conf "$dir/c/etc/dlsched.conf" "ModelFile=$dir/corrupt.pt" "ModelFallback=srtf"
scontrol reconfigure
wait_log 10 "sched/dlsched: note: dl2: $dir/corrupt.pt: cannot read the model.*; ordering by srtf instead" &&
	ok "corrupt model: falls back to ModelFallback=srtf, reason logged" ||
	ko "no fallback note for $dir/corrupt.pt: $(grep 'note:' "$log" | tail -n2)"
# A good model that every user could have written: refused as a missing one, logged as an error
# that names the file and the fix.
cp "$dir/small.pt" "$dir/open.pt" && chmod 666 "$dir/open.pt"
write_conf "$dir/c/etc/dlsched.conf" "ModelFile=$dir/open.pt" "ModelFallback=srtf"
scontrol reconfigure
wait_log 10 "error: sched/dlsched: note: dl2: $dir/open.pt: model file refused: writable by others than its owner.*chmod go-w $dir/open.pt.*; ordering by srtf instead" &&
	ok "a world-writable model file is refused: ModelFallback=srtf, an error naming the file and the fix" ||
	ko "no refusal for $dir/open.pt: $(grep 'note:' "$log" | tail -n2)"
scontrol update NodeName=n[1-2] State=RESUME
if wait_done 60 "${ids[@]}"; then
	n_ok=0
	for j in "${ids[@]}"; do completed "$j" && n_ok=$((n_ok + 1)); done
	[ $n_ok -eq ${#ids[@]} ] && ok "jobs still run under the fallback ($n_ok completed)" || ko "$n_ok of ${#ids[@]} jobs completed"
else
	ko "jobs did not finish within 60 s under the fallback: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
fi
rows_after=$(sqlite3 "$exp" "SELECT count(*) FROM experience")
[ "$rows_after" = "$rows_before" ] && ok "a fallback ordering records no experience" ||
	ko "experience rows grew under the fallback: $rows_before -> $rows_after"
grep -q "^fallback_cycles=0$" "$st" && ok "no cycle fell back to Slurm's order" || ko "stats: $(grep fallback "$st")"
last_pid=$(cat "$dir/c/pids/slurmctld.pid" 2>/dev/null)
kill -0 "${last_pid:-0}" 2>/dev/null && scontrol ping | grep -q UP &&
	ok "slurmctld up after every reconfigure (pid $ctld_pid at the start, $last_pid now)" || ko "slurmctld is down (pid '$last_pid')"
# The select plugin (no libtorch) builds Policy=dl2's placement with the fallback ordering standing
# in for the learned one (it only places), and says so.
grep -q "select/dlsched_cons_tres: loaded .*preset=dl2 ordering=[a-z-]* allocation=mckp placement=" "$log" &&
	grep -q "select/dlsched_cons_tres: note: placement only: .*ordering dl2 -> " "$log" &&
	ok "select/dlsched_cons_tres builds Policy=dl2's placement and says what stands in for the learned policies" ||
	ko "select plugin and Policy=dl2: $(grep 'select/dlsched_cons_tres' "$log" | tail -3 | tr '\n' ' ')"
"$tool" down --dir "$dir/c" >/dev/null

# ---- advisor mode: site_factor/dlsched has no learned policies: a clear error, Slurm decides ----
write_conf "$dir/advisor.conf" "ModelFile=$dir/small.pt"
if "$tool" up --nodes 1 --gpus 8 --dir "$dir/a" --port-base $((port + 100)) --mode advisor --no-profiling \
	--plugin-dir "$build/plugins/lib" --dlsched-conf "$dir/advisor.conf" >"$dir/upa.log" 2>&1; then
	export SLURM_CONF="$dir/a/etc/slurm.conf"
	log="$dir/a/log/slurmctld.log"
	# The advisor is shared by site_factor/dlsched and preempt/dlsched; whichever plugin slurmctld
	# loads first starts it and names it in its messages.
	wait_log 10 "(site_factor|preempt)/dlsched: .*Policy: preset 'dl2': unknown ordering policy 'dl2'.*learned policies, which only sched/dlsched" &&
		ok "advisor mode: Policy=dl2 is a clear logged error (...$(grep -o "unknown ordering policy 'dl2'.*" "$log" | head -n1 | grep -o '; dl2 and dual-agent [^;]*'))" ||
		ko "advisor mode: no clear error for Policy=dl2: $(grep dlsched "$log" | tail -n3)"
	j=$(sbatch --parsable -o /dev/null --gres=gpu:2 --wrap 'true')
	wait_done 30 "$j" && completed "$j" && scontrol ping | grep -q UP &&
		ok "advisor mode: jobs still run, slurmctld up" || ko "advisor mode: job $j did not complete"
else
	ko "advisor cluster did not come up: $(tail -3 "$dir/upa.log")"
fi

echo "test-learned: $(($(date +%s) - t0)) s"
[ $fails -eq 0 ] && echo "all learned-policy checks passed" || echo "$fails learned-policy check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; cleanup; rm -rf "$dir"; }
exit $((fails > 0))
