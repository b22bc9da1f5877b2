#!/usr/bin/env bash
# A soak test of the ingest service's threat model (doc/admin-guide.md, "Threat model") on a local
# cluster (dlsched-cluster, dlsched mode, profiling on, pickyman, 2 nodes of 4 GPUs): emulated
# training jobs of two users, root (honest) and dlsched-soak (the attacker, created when missing),
# while hostile clients on 127.0.0.1 post, a bounded number of times,
#  (a) batches whose credential is of another munge key (a second munged): 401 bad_credential;
#  (b) malformed JSON, under the attacker's own credential: 400 malformed;
#  (c) as the attacker, records for root's job: 403 wrong_user;
#  (d) for the attacker's own jobs: future-dated epochs, epochs from a made-up node, epochs faster
#      than plausible (from his job's third recorded epoch on), and, once the attacker has requeued
#      his second job, a save at its epochs_total: 403 implausible;
# and slurmctld is killed and started again in the middle; a high-QoS job preempts (checkpoint and
# requeue) one of the training jobs. Then:
#  - every job completes (sacct COMPLETED), each training job's epochs are 1..N once each;
#  - every requeue by sched/dlsched was after the job's checkpoint (or its exit on the request);
#  - no hostile post was accepted; each got its refusal, and /v1/stats counted exactly those;
#  - nothing forged is in the profile DB (no marked epoch or save, no row of the made-up node);
#  - root's jobs were asked to checkpoint only for the high-QoS job, never for the attacker's;
#  - slurmctld stayed up after the planned restart (the same pid at the end).
# About 2 minutes. Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector,
# dlsched-ingestd, curl, setpriv or useradd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, epochs_of, ...
profiled_cluster_test soak
for c in curl setpriv runuser useradd; do
	command -v $c >/dev/null || { echo "SKIP: $c missing"; exit 77; }
done
mallory=dlsched-soak
id -u $mallory >/dev/null 2>&1 || useradd -r -M -d /nonexistent -s /usr/sbin/nologin $mallory ||
	{ echo "SKIP: cannot create the user $mallory"; exit 77; }
muid=$(id -u $mallory)
# A second munged, of another key: the forger's. Stopped with the cluster.
mkdir -m 755 "$dir/m2"
dd if=/dev/urandom of="$dir/m2/key" bs=1024 count=1 2>/dev/null
chmod 600 "$dir/m2/key"
munged --force --socket="$dir/m2/sock" --key-file="$dir/m2/key" --pid-file="$dir/m2/pid" \
	--log-file="$dir/m2/log" --seed-file="$dir/m2/seed" || { echo "Bail out! the second munged did not start"; exit 1; }
trap '"$tool" down --dir "$dir/c" >/dev/null 2>&1; [ -f "$dir/m2/pid" ] && kill "$(cat "$dir/m2/pid")" 2>/dev/null' EXIT

profiled_cluster_up --nodes 2 --gpus 4 --policy pickyman
dlsched_conf Policy=pickyman SchedInterval=1 PreemptGrace=60 CheckpointAt=iteration
ingest="http://127.0.0.1:$((port + 3))"
sock="$dir/c/munge/munge.socket"
grep -q "sched/dlsched: loaded .*preset=pickyman" "$log" && ok "sched/dlsched runs pickyman" ||
	ko "no pickyman in $(grep 'sched/dlsched: loaded' "$log" | tail -1)"

mkdir -p "$dir/out" "$dir/ck"
chmod 777 "$dir/out" "$dir/ck"
head -c 2000000 /dev/urandom >"$dir/data"
chmod 644 "$dir/data"
# An emulated cifar10 job of EPOCHS epochs on GPUS GPUs (about 3 s each), as USER.
train() {  # train USER NAME GPUS EPOCHS [EPOCH_TIME_1GPU]
	runuser -u "$1" -- mkdir -p "$dir/ck/$2"
	runuser -u "$1" -- sbatch --parsable --requeue --qos=normal -J "$2" -o "$dir/out/$2.out" --open-mode=append \
		--gres=gpu:"$3" --time=20 --dl-model=cifar10 --dl-epochs="$4" --comment "epoch_time_1gpu=${5:-6}" \
		--wrap "exec $emu --model cifar10 --epochs $4 --epoch-time-1gpu ${5:-6} --noise 0 --storage-mbps 50 \
			--checkpoint-dir $dir/ck/$2 --data $dir/data --profiles $top/contribs/profiles"
}
stat_of() { curl -s --max-time 5 "$ingest/v1/stats" | sed -n 's/.*"'"$1"'": *\([0-9]*\).*/\1/p'; }
has_epochs() { [ "$(epochs_of "$1" | wc -l)" -ge "$2" ]; }  # has_epochs JOBID N

# All 8 GPUs busy: root's jobs on 4 and 2, the attacker's two on 1 each (m for the forged
# epochs, m2 for the claim after a requeue).
h1=$(train root honest1 4 16)
h2=$(train root honest2 2 16)
m=$(train $mallory mallory 1 16 3)
m2=$(train $mallory mallory2 1 12 3)
[ "$(squeue -h -j "$m" -o %u)" = $mallory ] && [ "$(squeue -h -j "$m2" -o %u)" = $mallory ] &&
	ok "jobs $m and $m2 are $mallory's, jobs $h1 and $h2 root's" ||
	ko "jobs $m, $m2 belong to '$(squeue -h -j "$m,$m2" -o %u | tr '\n' ' ')'"
wait_for 60 has_epochs "$m" 3 || ko "the attacker's job has $(epochs_of "$m" | wc -l) epochs in the DB after 60 s"
for k in bad_credential malformed wrong_user implausible; do eval "base_$k=\$(stat_of $k)"; done

# ---- the hostile clients ----
# forge KIND: a batch of that kind, its credential, posted (again while the answer is 503 or 429:
# Slurm being looked up, or slurmctld restarting); appends "KIND CODE ERROR" to $dir/hostile.log.
# Forged records are marked: bytes_read 777777 on epochs, bytes 4242 on saves.
now_s() { date +%s; }
ep() {  # ep EPOCH START END
	echo '{"type":"epoch","epoch":'"$1"',"gpus":1,"start":'"$2"',"end":'"$3"',"bytes_read":777777,"net_rx_bytes":-1,"nfs_read_bytes":-1}'
}
batch() {  # batch JOB NODE RUN RECORDS
	echo '{"v":1,"cluster":"dlsched","job_id":'"$1"',"step":"batch","node":"'"$2"'","run":'"$3"',"records":['"$4"']}'
}
forge() {  # forge KIND
	local kind=$1 tries=0 code body payload node run last now f="$dir/forge.$1"
	node=$(squeue -h -j "$m" -o %N 2>/dev/null)
	node=${node:-n1}
	run=$(scontrol show job "$m" 2>/dev/null | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
	run=${run:-0}
	last=$(epochs_of "$m" | tail -n1 | cut -d, -f1)
	last=${last:-0}
	run2=$(scontrol show job "$m2" 2>/dev/null | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
	run2=${run2:-0}
	now=$(now_s)
	case $kind in
	wrongkey) payload=$(batch "$m" "$node" "$run" "$(ep $((last + 1)) $((now - 4)) $((now - 1)))") ;;
	malformed) payload='{"v":1,"cluster":"dlsched","job_id":'"$m"',"records":[{"type":"epoch",' ;;
	wronguser) payload=$(batch "$h1" n1 0 "$(ep 99 $((now - 4)) $((now - 1)))") ;;
	future) payload=$(batch "$m" "$node" "$run" "$(ep $((last + 1)) $((now + 600)) $((now + 700)))") ;;
	fakenode) payload=$(batch "$m" evil1 "$run" "$(ep $((last + 1)) $((now - 4)) $((now - 1)))") ;;
	fast) payload=$(batch "$m" "$node" "$run" "$(ep $((last + 1)) $((now - 2)).0 $((now - 2)).1),$(ep $((last + 2)) $((now - 2)).1 $((now - 2)).2),$(ep $((last + 3)) $((now - 2)).2 $((now - 2)).3)") ;;
	save) payload=$(batch "$m2" "${m2node:-n2}" "$run2" '{"type":"checkpoint","kind":"save","epoch":12,"bytes":4242,"seconds":1,"at":'"$((now - 1))"'}') ;;
	esac
	while :; do
		tries=$((tries + 1))
		if [ "$kind" = wrongkey ]; then
			printf '%s' "$payload" | munge -S "$dir/m2/sock" >"$f.cred"
		else
			printf '%s' "$payload" | setpriv --reuid="$muid" --regid="$muid" --clear-groups munge -S "$sock" >"$f.cred"
		fi
		code=$(curl -s --max-time 10 -o "$f.body" -w '%{http_code}' -H 'Content-Type: application/x-munge' \
			--data-binary @"$f.cred" "$ingest/v1/records")
		body=$(cat "$f.body" 2>/dev/null)
		{ [ "$code" = 503 ] || [ "$code" = 429 ] || [ "$code" = 000 ]; } && [ $tries -lt 40 ] || break
		sleep 0.5
	done
	echo "$kind $code $(printf '%s' "$body" | sed -n 's/.*"error": *"\([a-z_]*\)".*/\1/p') $(printf '%s' "$body" | tr -d '\n' | cut -c1-160)" >>"$dir/hostile.log"
}
# 24 rounds, at most 150 s: each round a forged key, malformed JSON, root's job and one claim.
hostile() {
	local i=0 t0
	t0=$(now_s)
	while [ $i -lt 24 ] && [ $(($(now_s) - t0)) -lt 150 ]; do
		forge wrongkey
		forge malformed
		forge wronguser
		case $((i % 3)) in 0) forge future ;; 1) forge fakenode ;; 2) forge fast ;; esac
		i=$((i + 1))
		sleep 0.5
	done
}
: >"$dir/hostile.log"
hostile &
hpid=$!

# ---- slurmctld restarted in the middle ----
sleep 6
stop_slurmctld
sleep 2
start_slurmctld && ok "slurmctld restarted in the middle of the hostile posts"
pid2=$(cat "$dir/c/pids/slurmctld.pid")

# ---- a high-QoS job preempts a training job (checkpoint, requeue) ----
hi=$(sbatch --parsable --qos=high -J high -o /dev/null --gres=gpu:4 --time=5 --wrap 'sleep 3')
wait_for 40 grep -q "asked JobId=[0-9]* to checkpoint (preempted for job $hi" "$log" &&
	ok "the high-QoS job $hi preempted $(grep -o "asked JobId=[0-9]* to checkpoint (preempted for job $hi" "$log" | head -1 | cut -d' ' -f2)" ||
	ko "no checkpoint request for the high-QoS job $hi: $(grep 'sched/dlsched' "$log" | tail -2)"

# ---- the attacker requeues his job m2 and claims it is done (a save at its last epoch) ----
wait_for 60 is_state "$m2" RUNNING || ko "the attacker's job $m2 is not running: $(state_of "$m2")"
m2node=$(squeue -h -j "$m2" -o %N)
runuser -u $mallory -- scontrol requeuehold "$m2" >"$dir/requeuehold.out" 2>&1 ||
	ko "$mallory could not requeue job $m2: $(cat "$dir/requeuehold.out")"
wait_for 40 is_state "$m2" PENDING || ko "the attacker's job $m2 is not pending after its requeue: $(state_of "$m2")"
forge save
forge save
runuser -u $mallory -- scontrol release "$m2" >"$dir/release.out" 2>&1 ||
	ko "$mallory could not release job $m2: $(cat "$dir/release.out")"

wait "$hpid"
wait_done 240 "$h1" "$h2" "$m" "$m2" "$hi" || ko "the jobs did not finish in 240 s: $(squeue -h -o '%i %u %T %r' | tr '\n' ';')"

# ---- checks ----
for j in "$h1" "$h2" "$m" "$m2" "$hi"; do
	completed "$j" && ok "job $j completed ($(sacct -n -X -P --duplicates -o State -j "$j" | tr '\n' ' '))" ||
		ko "job $j: $(sacct -n -X -P --duplicates -o State -j "$j" | tr '\n' ' ')"
done
for jn in "$h1 16" "$h2 16" "$m 16" "$m2 12"; do
	set -- $jn
	wait_for 20 has_epochs "$1" "$2"
	epochs_of "$1" | is_sequence "$2" && ok "job $1: epochs 1..$2 once each, over runs $(epochs_of "$1" | cut -d, -f2 | sort -u | tr '\n' ' ')" ||
		ko "epochs of $1: $(epochs_of "$1" | tr '\n' ' ')"
done

requeues=$(grep -c "sched/dlsched: requeued JobId=" "$log")
bad=$(grep "sched/dlsched: requeued JobId=" "$log" | grep -v -e "after its checkpoint)" -e "it ended on the checkpoint request)")
[ "$requeues" -ge 1 ] && [ -z "$bad" ] &&
	ok "$requeues requeue(s) by sched/dlsched, each after the job's checkpoint or its exit on the request" ||
	ko "requeues: $requeues; not after a checkpoint: $bad"

want() {  # want KIND CODE ERROR: every post of KIND got CODE with ERROR; prints how many
	local n all
	all=$(awk -v k="$1" '$1 == k' "$dir/hostile.log" | wc -l)
	n=$(awk -v k="$1" -v c="$2" -v e="$3" '$1 == k && $2 == c && $3 == e' "$dir/hostile.log" | wc -l)
	[ "$all" -ge 1 ] && [ "$n" = "$all" ] && ok "$1: all $all forged post(s) refused ($2 $3)" ||
		ko "$1: $n of $all posts got $2 $3; others: $(awk -v k="$1" -v c="$2" '$1 == k && $2 != c' "$dir/hostile.log" | head -2 | tr '\n' ';')"
}
want wrongkey 401 bad_credential
want malformed 400 malformed
want wronguser 403 wrong_user
want future 403 implausible
want fakenode 403 implausible
want fast 403 implausible
want save 403 implausible
accepted=$(awk '$2 ~ /^2/' "$dir/hostile.log" | wc -l)
[ "$accepted" = 0 ] && ok "none of the $(wc -l <"$dir/hostile.log") hostile posts was accepted" ||
	ko "$accepted hostile post(s) accepted: $(awk '$2 ~ /^2/' "$dir/hostile.log" | head -3 | tr '\n' ';')"
for k in bad_credential malformed wrong_user implausible; do
	seen=$(awk -v e=$k '$3 == e' "$dir/hostile.log" | wc -l)
	eval "b=\$base_$k"
	now_k=$(stat_of $k)
	[ -n "$now_k" ] && [ $((now_k - b)) = "$seen" ] && ok "/v1/stats: $k counted $seen refusal(s), the hostile clients' own" ||
		ko "/v1/stats: $k went from $b to ${now_k:-?}; the hostile clients got $seen"
done

"$dbtool" --db "$db" export epochs >"$dir/epochs.csv" 2>/dev/null
"$dbtool" --db "$db" export checkpoints >"$dir/checkpoints.csv" 2>/dev/null
forged_e=$(awk -F, '$8 == 777777 || $11 == "evil1" || ($2 == '"$h1"' && $4 == 99)' "$dir/epochs.csv")
forged_c=$(awk -F, '$6 == 4242' "$dir/checkpoints.csv")
[ -s "$dir/epochs.csv" ] && [ -z "$forged_e" ] && [ -z "$forged_c" ] && ok "no forged epoch, save or node in the profile DB" ||
	ko "forged rows in the DB: $(printf '%s\n' "$forged_e" | grep -c .) epoch(s), $(printf '%s\n' "$forged_c" | grep -c .) save(s): $(printf '%s\n' "$forged_e" "$forged_c" | grep . | head -3 | tr '\n' ' ')"

# Root's jobs were stopped only for the high-QoS job; no request names the attacker's job.
asked=$(grep -E "asked JobId=($h1|$h2) to checkpoint" "$log")
n_asked=$(printf '%s' "$asked" | grep -c .)
other=$(printf '%s' "$asked" | grep -v "preempted for job $hi ")
for_m=$(grep -c -E "preempted for job ($m|$m2) " "$log")
[ -z "$other" ] && [ "$for_m" = 0 ] &&
	ok "root's jobs were asked to checkpoint $n_asked time(s), only for the high-QoS job $hi; none for the attacker's" ||
	ko "root's jobs moved otherwise: $other; requests for the attacker's job: $for_m"

[ "$(cat "$dir/c/pids/slurmctld.pid")" = "$pid2" ] && kill -0 "$pid2" 2>/dev/null &&
	ok "slurmctld stayed up after the planned restart (pid $pid2)" ||
	ko "slurmctld: pid $(cat "$dir/c/pids/slurmctld.pid"), was $pid2 after the restart; $(grep -E 'fatal|error' "$log" | tail -2)"

"$tool" down --dir "$dir/c" >/dev/null
kill "$(cat "$dir/m2/pid")" 2>/dev/null
[ $fails -eq 0 ] && echo "all soak checks passed" || echo "$fails soak check(s) failed; logs in $dir"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
