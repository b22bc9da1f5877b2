#!/usr/bin/env bash
# Preemption by priority class in a real slurmctld (dlsched-cluster, dlsched mode, Policy=pickyman,
# profiling on), two-step as sched/dlsched does it:
#  - a high-QoS job arriving into a full cluster preempts the victim the overhead model picks (the
#    job whose checkpoint is cheapest to write and read back), not the other one;
#  - the victim gets the checkpoint signal, saves, and is requeued only after its checkpoint report
#    reached the profile DB; it resumes without repeating or skipping an epoch;
#  - a job that ignores the signal is requeued when its grace (PreemptGrace=) runs out;
#  - the preemptions are recorded in the profile DB with what was predicted, and dlsched-report
#    measures the GPU-time they lost;
#  - a corrupt profile DB is logged and the scheduler goes on from the model profiles;
#  - the cycles DumpViews= recorded replay to the same decisions (dlsched-sim decide --view, through
#    the C ABI), the preemption's among them. DLSCHED_RECORD_REPLAY=DIR: copies the preemption's
#    cycle and the next that starts a job there (how testsuite/replay/'s recordings were made).
# (--no-requeue jobs, DOWN partitions and unmet dependencies: test-safety.sh.)
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
build="$(pwd)"
tool="$top/contribs/cluster/dlsched-cluster"
emu="$build/contribs/replay/dlsched-emu-train"
dbtool="$build/contribs/db/dlsched-db"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
	{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
ingestd="$build/contribs/ingestd/dlsched-ingestd"
for f in plugins/lib/sched_dlsched.so plugins/lib/spank_dlsched.so plugins/lib/dlsched-collect contribs/ingestd/dlsched-ingestd; do
	[ -e "$build/$f" ] ||
		{ echo "SKIP: $f not built (configure --with-slurm-source, libcurl, munge, libmicrohttpd; scripts/run-tests does it)"; exit 77; }
done

dir=$(mktemp -d /tmp/dlsched-preemption-test.XXXXXX)
chmod 755 "$dir"
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() { "$tool" down --dir "$dir/c" >/dev/null 2>&1; }
trap cleanup EXIT

if ! "$tool" up --nodes 2 --gpus 4 --dir "$dir/c" --port-base $port --mode dlsched --sched-interval 1 \
	--plugin-dir "$build/plugins/lib" --ingestd "$ingestd" --policy pickyman --profiles "$top/contribs/profiles" \
	>"$dir/up.log" 2>&1; then
	cat "$dir/up.log"
	echo "Bail out! cluster did not come up"
	exit 1
fi
export SLURM_CONF="$dir/c/etc/slurm.conf"
log="$dir/c/log/slurmctld.log"
db="$dir/c/profiles.db"
st="$dir/c/state/dlsched-sched.stats"
. "$top/testsuite/cluster/lib.sh"  # wait_done, completed, state_of, epochs_of, is_sequence
conf() {  # conf KEY=VALUE...: dlsched.conf for this test, then reconfigure
	{ printf '%s\n' "$@"; echo "ModelProfiles=$top/contribs/profiles"; } >"$dir/c/etc/dlsched.conf"
	scontrol reconfigure >/dev/null
	sleep 2
}
# emu-train stops at the next iteration (20 ms) when asked: iteration safe points.
mkdir -p "$dir/views"
conf Policy=pickyman SchedInterval=1 PreemptGrace=20 CheckpointAt=iteration "ProfileDB=$db" "DumpViews=$dir/views"
grep -q "sched/dlsched: loaded .*preset=pickyman.*preemption=overhead" "$log" && ok "sched/dlsched runs pickyman" ||
	ko "no pickyman in $(grep 'sched/dlsched: loaded' "$log" | tail -1)"

mkdir -p "$dir/out" "$dir/ck"
head -c 4000000 /dev/urandom >"$dir/data"
stat_of() { sed -n "s/^$1=//p" "$st"; }
wait_state() {  # wait_state SECONDS JOBID STATE
	local t=0
	while [ $t -lt $(($1 * 2)) ]; do
		[ "$(state_of "$2")" = "$3" ] && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}
# An emulated job of MODEL on 4 GPUs of NODE, EPOCHS epochs of about EPOCH_S s, normal QoS.
train() {  # train NAME MODEL EPOCHS EPOCH_S NODE
	local name="$1" model="$2" n="$3" es="$4" node="$5" t1
	mkdir -p "$dir/ck/$name"
	# Seconds per epoch on one reference GPU for EPOCH_S s on 4: EPOCH_S x the model's 4-GPU speedup
	# (about 3.5; the exact value only stretches the epochs a little).
	t1=$(awk -v e="$es" 'BEGIN { print e * 3.5 }')
	sbatch --parsable --requeue --qos=normal -J "$name" -o "$dir/out/$name.out" --open-mode=append \
		--gres=gpu:4 -w "$node" --time=20 --dl-model="$model" --dl-epochs="$n" \
		--comment "epoch_time_1gpu=$t1" \
		--wrap "exec $emu --model $model --epochs $n --epoch-time-1gpu $t1 --noise 0 --storage-mbps 100 \
			--checkpoint-dir $dir/ck/$name --data $dir/data --profiles $top/contribs/profiles"
}

# ---- the overhead model's victim: bert's checkpoint (1.3 GB) costs 13 s to write at 100 MB/s,
# cifar10's (90 MB) 0.9 s: the cifar10 job is stopped, the bert job is not ----
a=$(train bert-a bert 40 4 n1)
b=$(train cifar-b cifar10 8 4 n2)
wait_state 30 "$a" RUNNING && wait_state 30 "$b" RUNNING || ko "the normal jobs did not start"
sleep 6  # an epoch or so of each in the profile DB
h=$(sbatch --parsable --qos=high -J high -o /dev/null --gres=gpu:4 --time=5 --wrap 'sleep 4')
wait_done 90 "$h" || ko "the high-priority job did not finish in 90 s"
grep -q "asked JobId=$b to checkpoint (preempted for job $h (overhead)" "$log" &&
	ok "the cifar10 job was asked to checkpoint for the high-priority job" ||
	ko "no checkpoint request for job $b: $(grep 'asked JobId' "$log" | tail -3)"
grep -q "asked JobId=$a to checkpoint" "$log" && ko "the bert job was asked to checkpoint too" ||
	ok "the bert job (costlier to stop) was left alone"
# The cycle that decided the preemption was recorded, and it and every other recorded cycle replay
# to the decisions slurmctld got (now, before 200 newer ones replace them).
pre_view=$(python3 -c 'import json, sys
for f in sorted(sys.argv[2:]):
    if any(a["kind"] == 3 and a["job_id"] == int(sys.argv[1]) for a in json.load(open(f))["decisions"]["actions"]):
        print(f)
        break' "$b" "$dir"/views/view-*.json 2>/dev/null)
if [ -n "$pre_view" ]; then
	ok "the preemption's cycle was recorded: $(basename "$pre_view")"
	if [ -n "${DLSCHED_RECORD_REPLAY:-}" ]; then
		# and the first cycle after it that starts a job
		next_start=$(ls "$dir"/views/view-*.json | awk -v p="$pre_view" '$0 > p' | xargs -r grep -l '"kind": 1,' | head -1)
		cp "$pre_view" $next_start "$DLSCHED_RECORD_REPLAY"/
	fi
else
	ko "no recorded cycle requeues job $b: $(ls "$dir/views" | wc -l) files"
fi
DLSCHED_SIM="$build/contribs/sim/dlsched-sim" srcdir="$top" "$top/testsuite/replay/test-replay.sh" "$dir"/views/view-*.json \
	>"$dir/replay.out" 2>&1 &&
	ok "$(grep -c '^ok' "$dir/replay.out") recorded cycles replay to the decisions slurmctld got" ||
	ko "replays: $(grep -v '^ok' "$dir/replay.out" | head -5)"
grep -q "signal 10: checkpoint at epoch" "$dir/out/cifar-b.out" && ok "the victim got SIGUSR1 and saved" ||
	ko "victim output: $(tail -3 "$dir/out/cifar-b.out")"
# Requeued only after its checkpoint report: the save is in the DB, at or before the requeue.
requeue_line=$(grep "requeued JobId=$b " "$log" | head -1)
[[ "$requeue_line" == *"after its checkpoint"* ]] && ok "requeued after its checkpoint report" ||
	ko "requeue of $b: '$requeue_line'"
pre=$("$dbtool" --db "$db" export preemptions | awk -F, -v j="$b" '$2 == j')
save_at=$("$dbtool" --db "$db" export checkpoints | awk -F, -v j="$b" '$2 == j && $5 == "save" && $4 != int($4) { print $8 }' | head -1)
req_s=$(echo "$pre" | cut -d, -f3) requeued_s=$(echo "$pre" | cut -d, -f10) outcome=$(echo "$pre" | cut -d, -f9)
awk -v s="${save_at:-0}" -v q="${req_s:-0}" -v r="${requeued_s:-0}" 'BEGIN { exit !(s > 0 && q > 0 && q <= s && s <= r) }' &&
	[ "$outcome" = checkpointed ] &&
	ok "preemption recorded: requested $req_s, saved $save_at, requeued $requeued_s, outcome $outcome" ||
	ko "preemption row '$pre', mid-epoch save at '$save_at'"
pred=$(echo "$pre" | cut -d, -f6)
awk -v p="${pred:-0}" 'BEGIN { exit !(p > 0.5 && p < 5) }' && ok "its predicted suspend: ${pred} s (0.9 s write, no epoch to finish)" ||
	ko "predicted suspend '$pred'"
wait_done 150 "$b" || ko "the preempted job did not finish in 150 s"
completed "$b" && ok "the preempted job completed" || ko "job $b: $(sacct -n -X -P --duplicates -o State -j "$b" | tr '\n' ' ')"
epochs_of "$b" | is_sequence 8 && ok "it resumed without repeating or skipping an epoch (1..8 once each)" ||
	ko "epochs of $b: $(epochs_of "$b" | tr '\n' ' ')"
grep -Eq "^ +load +1 " <("$dbtool" --db "$db" job "$b" --cluster dlsched 2>/dev/null) && ok "its second run loaded the checkpoint" ||
	ko "no load in run 1 of $b"
scancel "$a"

# ---- a job that ignores the checkpoint signal is requeued when its grace runs out ----
# The stats count since slurmctld started, and from 23.11 scontrol reconfigure starts a new one:
# the checkpointed requeue is counted before it.
ckpt_requeues=$(stat_of requeued_after_checkpoint)
conf Policy=pickyman SchedInterval=1 PreemptGrace=8 CheckpointAt=iteration "ProfileDB=$db"
a2=$(train bert-a2 bert 40 4 n1)
ig=$(sbatch --parsable --requeue --qos=normal -J ignorer -o "$dir/out/ignorer.out" --gres=gpu:4 -w n2 --time=20 \
	--wrap 'trap "echo got USR1, ignored" USR1; for i in $(seq 600); do sleep 1; done')
wait_state 30 "$a2" RUNNING && wait_state 30 "$ig" RUNNING || ko "the jobs did not start"
sleep 3
t0=$(date +%s)
h2=$(sbatch --parsable --qos=high -J high2 -o /dev/null --gres=gpu:4 --time=5 --wrap 'sleep 2')
wait_done 60 "$h2" || ko "high2 did not finish in 60 s"
grep -q "asked JobId=$ig to checkpoint" "$log" && grep -q "requeued JobId=$ig .*its grace ran out" "$log" &&
	ok "the job that ignored the signal was requeued when its grace (8 s) ran out" ||
	ko "ignorer: $(grep "JobId=$ig" "$log" | tail -3)"
start_h2=$(sacct -n -X -P -o Start -j "$h2" | tail -1)
wait=$(( $(date -d "$start_h2" +%s) - t0 ))
[ "$wait" -ge 7 ] && [ "$wait" -le 40 ] && ok "high2 started $wait s after its submission (grace 8 s)" ||
	ko "high2 started after $wait s"
grep -q "got USR1, ignored" "$dir/out/ignorer.out" && ok "the ignorer did get the signal" || ko "ignorer output: $(cat "$dir/out/ignorer.out")"
scancel "$ig" "$a2"
wait_done 30 "$ig" "$a2"
[ "${ckpt_requeues:-0}" -ge 1 ] 2>/dev/null && [ "$(stat_of requeued_after_grace)" -ge 1 ] 2>/dev/null &&
	ok "stats: $(grep -E '^(checkpoint_requests|requeued_after|stops_gone|preemption_rows)' "$st" | tr '\n' ' ')" ||
	ko "stats: $(tr '\n' ' ' <"$st")"

# ---- dlsched-report measures the GPU-time the requeues lost ----
sleep 2
"$top/contribs/report/dlsched-report" --profile-db "$db" --format json >"$dir/report.json" 2>"$dir/report.err" &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["preemption_loss"]; sys.exit(0 if d["measured"] >= 1 and d["lost_gpu_s"] > 0 else 1)' "$dir/report.json" &&
	ok "dlsched-report: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["preemption_loss"]; print(d["measured"], "requeues measured,", round(d["lost_gpu_s"]), "GPU-s lost")' "$dir/report.json")" ||
	ko "dlsched-report: $(cat "$dir/report.err") $(head -c 600 "$dir/report.json")"

# ---- a corrupt profile DB: logged, the cycles go on from the model profiles ----
printf 'not a database, not at all\n' >"$dir/corrupt.db"
conf Policy=pickyman SchedInterval=1 "ProfileDB=$dir/corrupt.db"
x=$(train after-corrupt cifar10 2 1 n1)
wait_done 60 "$x" && completed "$x" && ok "jobs run with a corrupt profile DB" || ko "job $x did not complete"
grep -q "sched/dlsched: profile DB: .*corrupt.db" "$log" && ok "the corrupt profile DB was logged" ||
	ko "no profile DB error in the log: $(grep 'profile DB' "$log" | tail -2)"
grep -q "^fallback_cycles=0$" "$st" && ok "no cycle fell back" || ko "fallbacks: $(grep fallback "$st")"

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all preemption checks passed" || echo "$fails preemption check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
