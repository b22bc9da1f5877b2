#!/usr/bin/env bash
# The dlsched plugins inside a real slurmctld (dlsched-cluster, dlsched mode, then advisor mode):
# they load; jobs start in dlsched's order (sacct start times differ from FIFO's); the select
# plugin puts jobs on the Placement policy's nodes; a pending job's GPU count is changed by an
# elastic policy; preemption signals, requeues and the job resumes from its checkpoint; deadlines
# land in the admin comment; a bad dlsched.conf or missing profiles are logged and Slurm carries on;
# slurmctld killed mid-replay loses no job; the site factor shows in sprio (advisor mode).
# Skips (77) without root, Slurm/munge/MariaDB, or plugins (configure --with-slurm-source).
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
build="$(pwd)"
tool="$top/contribs/cluster/dlsched-cluster"
emu="$build/contribs/replay/dlsched-emu-train"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
	{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
[ -f "$build/plugins/lib/sched_dlsched.so" ] ||
	{ echo "SKIP: plugins not built (configure --with-slurm-source; scripts/run-tests does it)"; exit 77; }

dir=$(mktemp -d /tmp/dlsched-plugins-test.XXXXXX)
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() { "$tool" down --dir "$dir/c" >/dev/null 2>&1; "$tool" down --dir "$dir/a" >/dev/null 2>&1; }
trap cleanup EXIT
conf() {  # conf KEY=VALUE...: rewrite dlsched.conf and reconfigure
	{ printf '%s\n' "$@"; echo "ModelProfiles=$top/contribs/profiles"; } >"$dir/c/etc/dlsched.conf"
	scontrol reconfigure >/dev/null
	sleep 3
}
# dlsched metadata of an imagenet job claiming $1 s on one GPU (about $1 / 7.8 s on 8 GPUs). Claims
# count only within [time limit / HintTrustFactor (10), time limit] (no limit: at least 3600 s), so
# jobs ordered by their claims get a --time that keeps them there.
meta() { echo "model=imagenet epochs=1 epoch_time_1gpu=$1 ${2:-}"; }
. "$top/testsuite/cluster/lib.sh"  # wait_done, completed
start_of() { sacct -n -X -P -o Start -j "$1" | tail -n1; }
node_of() { sacct -n -X -P -o NodeList -j "$1" | tail -n1; }

if ! "$tool" up --nodes 2 --gpus 8 --dir "$dir/c" --port-base $port --mode dlsched \
	--plugin-dir "$build/plugins/lib" --policy srtf --profiles "$top/contribs/profiles" >"$dir/up.log" 2>&1; then
	cat "$dir/up.log"
	echo "Bail out! cluster did not come up"
	exit 1
fi
export SLURM_CONF="$dir/c/etc/slurm.conf"
log="$dir/c/log/slurmctld.log"
grep -q "sched/dlsched: loaded .*preset=srtf" "$log" && ok "sched/dlsched loaded dlsched.conf" || ko "sched/dlsched did not log its configuration"

# ---- order: srtf starts the shortest of three waiting jobs first, FIFO would start the first ----
b1=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=1 --comment "$(meta 8)" --wrap 'sleep 4')
b2=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=1 --comment "$(meta 1)" --wrap 'sleep 25')
sleep 1.5
l=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=30 --comment "$(meta 2400)" --wrap 'sleep 3')
m=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=10 --comment "$(meta 800)" --wrap 'sleep 3')
s=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=3 --deadline=now+1hour --comment "$(meta 160)" --wrap 'sleep 3')
wait_done 60 $b1 $b2 $l $m $s || ko "order jobs did not finish in 60 s"
ts=$(start_of $s) tm=$(start_of $m) tl=$(start_of $l)
if [[ "$ts" < "$tm" && "$tm" < "$tl" ]]; then ok "jobs started in srtf order (S $ts, M $tm, L $tl)"
else ko "start order S $ts, M $tm, L $tl is not srtf's"; fi
# Slurm's main scheduler also starts jobs in dlsched's order, and may come first at a job's end
# (26.05 runs it within 0.1 s of a completion): one of the three started by sched/dlsched itself.
grep -qE "sched/dlsched: started JobId=($s|$m|$l) on" "$log" && ok "sched/dlsched started a planned job itself" ||
	ko "no start of $s, $m or $l logged by sched/dlsched"
sleep 2
ac=$(sacct -n -X -P -o AdminComment -j "$s" | tail -n1)
[[ "$ac" == *deadline=* ]] && ok "deadline recorded for sacct ($ac)" || ko "no deadline in AdminComment: '$ac'"
st="$dir/c/state/dlsched-sched.stats"
grep -q "^cycles=[1-9]" "$st" && grep -q "^starts=[1-9]" "$st" && ok "stats file counts cycles and starts" || ko "stats: $(tr '\n' ' ' <"$st")"

# ---- spank/dlsched: --dl-* options checked at submit time, read by sched/dlsched ----
if [ -f "$build/plugins/lib/spank_dlsched.so" ]; then
	sbatch --help 2>&1 | grep -q -- "--dl-elastic=MIN:MAX" && ok "sbatch --help lists --dl-elastic" || ko "no --dl-* options in sbatch --help"
	err=$(sbatch --parsable -o /dev/null --dl-elastic=8:2 --wrap true 2>&1); rc=$?
	[ $rc -ne 0 ] && [[ "$err" == *"--dl-elastic: need 1 <= MIN <= MAX <= 4096 GPUs, got 8:2"* ]] &&
		ok "bad --dl-elastic refused at submit time" || ko "--dl-elastic=8:2: rc $rc, $err"
	err=$(sbatch --parsable -o /dev/null --dl-model='res net' --wrap true 2>&1); rc=$?
	[ $rc -ne 0 ] && [[ "$err" == *"--dl-model: 'res net' may contain only"* ]] && ok "bad --dl-model refused" ||
		ko "--dl-model='res net': rc $rc, $err"
	# srtf with the epochs from --dl-epochs (the comment gives only the epoch time): the 2-epoch job
	# starts before the 30-epoch one submitted first.
	b1=$(sbatch --parsable -o /dev/null --gres=gpu:8 -w n1 --time=1 --comment "$(meta 8)" --wrap 'sleep 6')
	b2=$(sbatch --parsable -o /dev/null --gres=gpu:8 -w n2 --time=2 --comment "$(meta 1)" --wrap 'sleep 60')
	sleep 1
	l=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=30 --dl-model=imagenet --dl-epochs=30 --comment "epoch_time_1gpu=80" --wrap 'sleep 2')
	s=$(sbatch --parsable -o "$dir/spank-%j.out" --gres=gpu:8 --time=3 --dl-model=imagenet --dl-epochs=2 --comment "epoch_time_1gpu=80" \
		--wrap 'echo "model=$SLURM_SPANK_DL_MODEL epochs=$SLURM_SPANK_DL_EPOCHS"; sleep 2')
	# One node frees at 6 s; the other stays busy, so the two jobs cannot start together.
	wait_done 50 $b1 $l $s || ko "spank jobs did not finish in 50 s"
	scancel "$b2"
	ts=$(start_of $s) tl=$(start_of $l)
	[[ "$ts" < "$tl" ]] && ok "srtf used --dl-epochs (2-epoch job at $ts, 30-epoch job at $tl)" || ko "--dl-epochs ignored: S $ts, L $tl"
	grep -q "^model=imagenet epochs=2$" "$dir/spank-$s.out" && ok "the job sees SLURM_SPANK_DL_MODEL and SLURM_SPANK_DL_EPOCHS" ||
		ko "job environment: $(cat "$dir/spank-$s.out" 2>/dev/null)"
else
	ko "spank_dlsched.so not built"
fi

# ---- placement: the select plugin (main scheduler starts the jobs between dlsched cycles) ----
for pol in spread pack; do
	conf Policy=fifo PlacementPolicy=$pol SchedInterval=300
	x=$(sbatch --parsable -o /dev/null --gres=gpu:6 -w n1 --wrap 'sleep 8')
	sleep 2
	y=$(sbatch --parsable -o /dev/null --gres=gpu:2 --wrap 'sleep 2')
	wait_done 30 $x $y
	want=n2; [ $pol = pack ] && want=n1
	got=$(node_of $y)
	[ "$got" = "$want" ] && ok "select plugin: PlacementPolicy=$pol put the 2-GPU job on $want" ||
		ko "select plugin: PlacementPolicy=$pol put it on '$got', want $want"
done
grep -q "select/dlsched_cons_tres: loaded" "$log" && ok "select/dlsched_cons_tres loaded dlsched.conf" || ko "select plugin never loaded dlsched.conf"

# ---- a pending job's GPU count: optimus gives an elastic 2-GPU job more on an idle node ----
conf Policy=optimus SchedInterval=1
e=$(sbatch --parsable -o /dev/null --gres=gpu:2 --time=10 --comment "$(meta 600 'gpus_min=1 gpus_max=8')" --wrap 'sleep 3')
wait_done 30 $e
g=$(sacct -n -X -P -o AllocTRES -j "$e" | tail -n1 | grep -o 'gres/gpu=[0-9]*' | cut -d= -f2)
[ "${g:-0}" -gt 2 ] && ok "elastic job's GPU count updated before start (2 -> $g)" || ko "elastic job ran with ${g:-?} GPUs"

# ---- preemption: signal, requeue, resume from the checkpoint ----
conf Policy=srtf SchedInterval=1
mkdir -p "$dir/out"
long=$(sbatch --parsable --requeue -o "$dir/out/%j.out" --open-mode=append --gres=gpu:8 -w n1 --time=1 \
	--comment "model=imagenet epochs=4 epoch_time_1gpu=40" \
	--wrap "exec $emu --model imagenet --epochs 4 --epoch-time-1gpu 40 --checkpoint $dir/out/ckpt-long --profiles $top/contribs/profiles")
other=$(sbatch --parsable -o /dev/null --gres=gpu:8 -w n2 --time=1 --comment "$(meta 8)" --wrap 'sleep 6')
sleep 3
short=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=1 --comment "$(meta 16)" --wrap 'sleep 2')
wait_done 120 $long $other $short || ko "preemption jobs did not finish in 120 s"
# The preempted job ends on the checkpoint request and is requeued within a second or so: wait for
# its last run to complete.
t=0
while [ $t -lt 60 ] && ! sacct -n -X -P --duplicates -o State -j "$long" | tail -n1 | grep -qx COMPLETED; do
	sleep 1; t=$((t + 1))
done
recs=$(sacct -n -X -P --duplicates -o State -j "$long" | tr '\n' ' ')
[[ "$recs" == *REQUEUED* && "$recs" == *COMPLETED* ]] && ok "long job requeued, then completed ($recs)" || ko "long job records: $recs"
grep -q "signal .*: checkpoint at epoch" "$dir/out/$long.out" && grep -q "from epoch [0-9.]*[1-9]" "$dir/out/$long.out" &&
	ok "preempted job checkpointed and resumed from its checkpoint" || ko "no checkpoint/resume in $(cat "$dir/out/$long.out" 2>/dev/null)"

# ---- bad configuration and missing profiles: logged, Slurm carries on ----
# A job waiting behind two busy nodes holds a dlsched priority (above priority/basic's range,
# 0xffff0000); once dlsched.conf is bad, it is back at Slurm's own.
x1=$(sbatch --parsable -o /dev/null --gres=gpu:8 -w n1 --wrap 'sleep 30')
x2=$(sbatch --parsable -o /dev/null --gres=gpu:8 -w n2 --wrap 'sleep 30')
pj=$(sbatch --parsable -o /dev/null --gres=gpu:8 --comment "$(meta 60)" --wrap 'true')
sleep 3
prio_before=$(squeue -h -j "$pj" -o %Q)
conf Policy=srtf SchedIntervall=1
prio_after=$(squeue -h -j "$pj" -o %Q)
[ "${prio_before:-0}" -gt 4294901760 ] 2>/dev/null && [ "${prio_after:-0}" -gt 0 ] 2>/dev/null &&
	[ "$prio_after" -le 4294901760 ] && grep -q "back at Slurm's own priority" "$log" &&
	ok "bad dlsched.conf: the waiting job is back at Slurm's priority ($prio_before -> $prio_after)" ||
	ko "priority under fallback: $prio_before -> $prio_after"
scancel "$x1" "$x2" "$pj"
grep -q "dlsched.conf:2: unknown key 'SchedIntervall'" "$log" && ok "bad dlsched.conf logged with file:line" || ko "bad key not logged"
j=$(sbatch --parsable -o /dev/null --gres=gpu:1 --wrap 'true')
wait_done 30 $j && completed $j && ok "jobs still run with a bad dlsched.conf" || ko "job $j did not complete under fallback"
{ echo Policy=srtf; echo ModelProfiles=/nonexistent/profiles; } >"$dir/c/etc/dlsched.conf"
scontrol reconfigure >/dev/null; sleep 3
grep -q "/nonexistent/profiles" "$log" && ok "missing model profiles logged, naming the path" || ko "missing profiles not logged"
j=$(sbatch --parsable -o /dev/null --gres=gpu:2 --comment "$(meta 60)" --wrap 'true')
wait_done 30 $j && completed $j && ok "jobs still run without model profiles" || ko "job $j did not complete without model profiles"
scontrol ping | grep -q UP && ok "slurmctld survived the bad configurations" || ko "slurmctld is down"

# ---- slurmctld killed mid-replay: every job completes, none is lost ----
conf Policy=srtf SchedInterval=1
# The lost jobs must not have started: Slurm (every release) gives a lost job's id to the next job
# submitted after the restart (it purges the lost job's batch files as defunct at start), and a
# lost job that had run leaves its record in slurmd (its completion was refused: "invalid JobId"),
# so slurmd refuses the new job of that id ("already running") and slurmctld drains the node
# ("Duplicate jobid"). Whether any had run depended on timing (on 26.05 they had, every time). So
# the nodes are drained while the replay submits, and resumed once slurmctld is back.
scontrol update NodeName=n[1-2] State=DRAIN Reason=crash-test
sleep 6 # slurmctld saves its state at most every 5 s: the drain is in it
"$build/contribs/replay/dlsched-replay" --workload "$top/contribs/traces/philly/philly_2017-10-02_100.csv" \
	--max-jobs 20 --speedup 2000 --out "$dir/replay" --emu-train "$emu" >"$dir/replay.log" 2>&1 &
rp=$!
# Killed while the replay submits (its 20 jobs arrive over 2.7 s): slurmctld saves its state at most
# every 5 s, so the jobs accepted since the last save are lost, as in a real crash, and the
# replay has to notice and submit them again. Killed as soon as its first jobs are in the queue: a
# fixed 2 s fell before the first submission on a loaded machine (the replay starting slowly; CI on
# a fresh clone beside other work: 0 lost, so the loss path was not exercised).
submitting() { [ "$(squeue -h -o %j 2>/dev/null | grep -c '^dl-')" -ge 2 ]; }
wait_for 20 submitting || ko "the replay submitted nothing within 20 s ($(tail -2 "$dir/replay.log"))"
# The pid: the file's first line (a 24.11 run once read "875" and "4" on two lines there), else the
# process running this cluster's slurmctld; then it must really be gone before the restart.
ctld=$(head -n1 "$dir/c/pids/slurmctld.pid" 2>/dev/null | tr -dc 0-9)
[ -n "$ctld" ] && [ -d "/proc/$ctld" ] || ctld=$(pgrep -o -f "$dir/c/bin/slurmctld")
kill -9 "$ctld"
gone() { ! kill -0 "$ctld" 2>/dev/null; }
wait_for 10 gone || ko "slurmctld (pid $ctld) still runs after kill -9"
sleep 1
"$dir/c/bin/slurmctld" -f "$SLURM_CONF"
# Resumed once they have registered with the new slurmctld (RESUME is refused before); 22.05's
# restarted slurmctld may have brought them back undrained already.
undrained() { ! sinfo -h -N -n n[1-2] -o %T | grep -q drain || { scontrol update NodeName=n[1-2] State=RESUME 2>/dev/null; false; }; }
wait_for 30 scontrol ping >/dev/null && wait_for 30 undrained ||
	ko "restarted slurmctld did not answer, or the nodes could not be resumed: $(sinfo -h -N -n n[1-2] -o '%N %T' | tr '\n' ' ')"
wait $rp; rc=$?
n_sub=$(($(wc -l <"$dir/replay/jobs.csv") - 1))
ids=$(tail -n +2 "$dir/replay/jobs.csv" | cut -d, -f2 | paste -sd,)
# A restarted slurmctld reuses the ids of the jobs it lost: a job is its id and its name.
# Accounting lags slurmctld (more so on a loaded machine): read it until it has them all, 20 s at most.
for t in $(seq 40); do
	n_done=$(sacct -n -X -P --duplicates -o JobIDRaw,JobName,State -j "$ids" |
		awk -F'|' -v map="$dir/replay/jobs.csv" 'BEGIN { while ((getline l < map) > 0) { split(l, f, ","); want[f[2] "|dl-" f[1]] = 1 } }
			$3 == "COMPLETED" && (($1 "|" $2) in want) { c[$1 "|" $2] = 1 } END { print length(c) }')
	[ "$n_done" -ge 20 ] && break
	sleep 0.5
done
# Jobs that slurmctld lost (submitted after its last state save) were submitted again by the replay
# (lost_jobs column); sacct must hold exactly one completed job per trace job, by name.
n_lost=$(tail -n +2 "$dir/replay/jobs.csv" | cut -d, -f7 | tr ';' '\n' | grep -c . || true)
n_names=$(sacct -n -X -P --duplicates -a -S 1970-01-01 -o JobName,State | awk -F'|' '$1 ~ /^dl-/ && $2 == "COMPLETED" { c[$1] = 1 } END { print length(c) }')
[ $rc -eq 0 ] && [ "$n_sub" -eq 20 ] && [ "$n_done" -eq 20 ] && [ "$n_names" -eq 20 ] && [ "$n_lost" -gt 0 ] &&
	ok "slurmctld restart mid-replay: 20 submitted, $n_done completed, 20 trace jobs completed in sacct ($n_lost lost by slurmctld and resubmitted)" ||
	ko "restart mid-replay: replay rc $rc, $n_sub submitted, $n_done completed, $n_names trace jobs completed in sacct, $n_lost lost by slurmctld ($(tail -2 "$dir/replay.log"))"

"$tool" down --dir "$dir/c" >/dev/null
left=$(pgrep -f "$dir/c" | wc -l)
[ "$left" -eq 0 ] && ok "down left no process behind" || ko "$left processes left"

# ---- advisor mode: sched/backfill with site_factor/dlsched and preempt/dlsched ----
if "$tool" up --nodes 1 --gpus 8 --dir "$dir/a" --port-base $((port + 100)) --mode advisor \
	--plugin-dir "$build/plugins/lib" --policy srtf --profiles "$top/contribs/profiles" >"$dir/upa.log" 2>&1; then
	export SLURM_CONF="$dir/a/etc/slurm.conf"
	# One advisor for both plugins: one of them loads dlsched.conf and runs the thread, the other
	# shares it (before, each ran its own decide()).
	alog="$dir/a/log/slurmctld.log"
	loads=$(grep -cE "(site_factor|preempt)/dlsched: loaded" "$alog")
	[ "$loads" -eq 1 ] && grep -qE "(site_factor|preempt)/dlsched: shares the advisor (site_factor|preempt)/dlsched started" "$alog" &&
		ok "advisor plugins loaded, sharing one advisor" || ko "advisor plugins: $loads loads; $(grep -E '(site_factor|preempt)/dlsched' "$alog" | head -4)"
	b=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=5 --comment "$(meta 1)" --wrap 'sleep 120')
	sleep 1
	l=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=30 --comment "$(meta 2400)" --wrap 'true')
	s=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=3 --comment "$(meta 160)" --wrap 'true')
	# site_factor_p_update runs every PriorityCalcPeriod (1 minute).
	t=0
	while [ $t -lt 75 ]; do
		fs=$(sprio -h -j "$s" -o '%S' 2>/dev/null | tr -d ' ')
		fl=$(sprio -h -j "$l" -o '%S' 2>/dev/null | tr -d ' ')
		[ "${fs:-0}" -gt 0 ] 2>/dev/null && [ "${fl:-0}" -gt 0 ] 2>/dev/null && break
		sleep 3; t=$((t + 3))
	done
	[ "${fs:-0}" -gt "${fl:-0}" ] 2>/dev/null && ok "sprio SITE: short job $fs > long job $fl" || ko "sprio SITE: short '$fs', long '$fl'"
	scancel $b $l $s
else
	ko "advisor cluster did not come up: $(tail -3 "$dir/upa.log")"
fi

[ $fails -eq 0 ] && echo "all plugin checks passed" || echo "$fails plugin check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; cleanup; rm -rf "$dir"; }
exit $((fails > 0))
