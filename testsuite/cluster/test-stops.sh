#!/usr/bin/env bash
# Nothing lost while dlsched.conf is broken (dlsched-cluster, dlsched mode, profiling on; one training
# node and one inference node of 4 GPUs each):
#  - a job asked to checkpoint is requeued after its checkpoint even when dlsched.conf gets a bad
#    Policy= between the request and the save: the preemption's second step does not depend on the
#    policy (before, it waited for a dlsched.conf that loads; past MinJobAge the job was lost);
#  - the same across a slurmctld restart with a bad dlsched.conf: the stopping table is read back
#    from its journal, ProfileDB= from the file's safety keys;
#  - the first cycle after a slurmctld restart, before the nodes register again, does not take
#    their running jobs for jobs on down nodes (srtf requeued every running job);
#  - a job that saves and exits on the checkpoint request does not release its afterany/afterok
#    dependants: they start once it has really finished (before, the next stage started at once);
#  - a resize keeps the GPU type the job asked for, and a job whose GPUs are per job (--gpus) is
#    not checkpointed to be resized (it could not be: before, the preemption was for nothing);
#  - a bad Policy= keeps the loan fence: the lent inference node is taken back (Slurm's own
#    behaviour lends nothing) and no training job is placed on it (before, the fence was off).
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, epochs_of, ...
profiled_cluster_test stops

profiled_cluster_up --nodes 1 --inference-nodes 1 --gpus 4 --gpu-types v100:1 --policy pickyman
conf="$dir/c/etc/dlsched.conf"
good() {  # good POLICY: a dlsched.conf that loads
	dlsched_conf "Policy=$1" SchedInterval=1 PreemptGrace=60 CheckpointAt=iteration InferencePartition=infer \
		ReclaimTimeout=20
}
broken() {  # a typo in Policy=: the file does not load
	sed -i 's/^Policy=.*/Policy=pickymann/' "$conf"
	scontrol reconfigure >/dev/null
}
stat_of() { sed -n "s/^$1=//p" "$st"; }
node_of() { squeue -h -j "$1" -o %N 2>/dev/null; }
total_gpus() { sacct -n -X -P -o AllocTRES -j "$1" | tail -1 | tr ',' '\n' | sed -n 's/^gres\/gpu=//p'; }
good pickyman
grep -q "sched/dlsched: loaded .*preset=pickyman" "$log" && ok "sched/dlsched runs pickyman" ||
	ko "no pickyman in $(grep 'sched/dlsched: loaded' "$log" | tail -1)"

mkdir -p "$dir/out" "$dir/ck"
head -c 2000000 /dev/urandom >"$dir/data"
# An emulated cifar10 job on the 4 GPUs of n1: EPOCHS epochs of about 3 s; its checkpoint (90 MB)
# takes 9 s to write at 10 MB/s: the window in which dlsched.conf breaks.
train() {  # train NAME EPOCHS
	mkdir -p "$dir/ck/$1"
	sbatch --parsable --requeue --qos=normal -J "$1" -o "$dir/out/$1.out" --open-mode=append -p train -w n1 \
		--gres=gpu:4 --time=20 --dl-model=cifar10 --dl-epochs="$2" --comment "epoch_time_1gpu=10.5" \
		--wrap "exec $emu --model cifar10 --epochs $2 --epoch-time-1gpu 10.5 --noise 0 --storage-mbps 10 \
			--checkpoint-dir $dir/ck/$1 --data $dir/data --profiles $top/contribs/profiles"
}
high() { sbatch --parsable --qos=high -J "$1" -o /dev/null -p train --gres=gpu:4 --time=5 --wrap 'sleep 3'; }

# ---- a bad Policy= between the checkpoint request and the save ----
v=$(train victim 8)
wait_for 30 is_state "$v" RUNNING || ko "the victim did not start"
sleep 5  # an epoch in the profile DB
h=$(high high1)
wait_for 20 grep -q "asked JobId=$v to checkpoint" "$log" || ko "no checkpoint request for $v"
broken
wait_for 10 grep -q "^scheduler=none" "$st" && ok "dlsched.conf broken after the request ($(stat_of safety_settings | cut -c1-60)...)" ||
	ko "stats: $(grep -E '^(scheduler|safety_settings)=' "$st" | tr '\n' ' ')"
wait_for 40 grep -q "requeued JobId=$v .*after its checkpoint" "$log" && grep -q "^scheduler=none" "$st" &&
	ok "the victim was requeued after its checkpoint while dlsched.conf was still broken" ||
	ko "victim $v: $(state_of "$v"); $(grep "JobId=$v" "$log" | tail -2)"
wait_for 20 is_state "$v" PENDING || ko "the victim is not pending after its requeue: $(state_of "$v")"
good pickyman
wait_done 150 "$v" "$h" || ko "the jobs did not finish in 150 s"
completed "$v" && ok "the victim completed" || ko "job $v: $(sacct -n -X -P --duplicates -o State -j "$v" | tr '\n' ' ')"
epochs_of "$v" | is_sequence 8 && ok "without repeating or skipping an epoch (1..8 once each)" ||
	ko "epochs of $v: $(epochs_of "$v" | tr '\n' ' ')"

# ---- a stopped job does not release its dependants ----
v3=$(train victim3 6)
wait_for 30 is_state "$v3" RUNNING || ko "victim3 did not start"
d1=$(sbatch --parsable -J after-any -o /dev/null -p infer --gres=gpu:1 --time=2 --dependency=afterany:"$v3" --wrap 'sleep 1')
d2=$(sbatch --parsable -J after-ok -o /dev/null -p infer --gres=gpu:1 --time=2 --dependency=afterok:"$v3" --wrap 'sleep 1')
sleep 4
h3=$(high high3)
wait_for 20 grep -q "asked JobId=$v3 to checkpoint" "$log" || ko "no checkpoint request for $v3"
wait_for 40 grep -q "requeued JobId=$v3 " "$log" || ko "victim3 was not requeued"
sleep 3
[ "$(state_of "$d1")" = PENDING ] && [ "$(state_of "$d2")" = PENDING ] &&
	ok "after victim3's checkpoint and requeue its afterany and afterok dependants still wait ($(squeue -h -j "$d1" -o %r))" ||
	ko "dependants: $d1 $(state_of "$d1") $d2 $(state_of "$d2"); $(grep -E "JobId=($d1|$d2)" "$log" | tail -2)"
wait_done 150 "$v3" "$h3" "$d1" "$d2" || ko "victim3 and its dependants did not finish in 150 s"
end_v3=$(date -d "$(sacct -n -X -P -o End -j "$v3" | tail -1)" +%s)
start_d1=$(date -d "$(sacct -n -X -P -o Start -j "$d1" | tail -1)" +%s 2>/dev/null || echo 0)
start_d2=$(date -d "$(sacct -n -X -P -o Start -j "$d2" | tail -1)" +%s 2>/dev/null || echo 0)
completed "$v3" && [ "$start_d1" -ge "$end_v3" ] && [ "$start_d2" -ge "$end_v3" ] && completed "$d2" &&
	ok "the dependants started after victim3 really finished (end $end_v3, starts $start_d1 $start_d2)" ||
	ko "victim3 $(sacct -n -X -P --duplicates -o State,End -j "$v3" | tr '\n' ' '); d1 start $start_d1, d2 $(sacct -n -X -P -o State,Start -j "$d2" | tail -1)"

# ---- the same across a restart of slurmctld with a bad dlsched.conf ----
v2=$(train victim2 8)
wait_for 30 is_state "$v2" RUNNING || ko "victim2 did not start"
sleep 5
h2=$(high high2)
wait_for 20 grep -q "asked JobId=$v2 to checkpoint" "$log" || ko "no checkpoint request for $v2"
stop_slurmctld
grep -q "^v2 $v2 " "$dir/c/state/dlsched-stopping.state" && ok "the preemption of $v2 is in the stopping table's journal" ||
	ko "journal: $(cat "$dir/c/state/dlsched-stopping.state")"
sed -i 's/^Policy=.*/Policy=pickymann/' "$conf"
start_slurmctld
wait_for 40 grep -q "requeued JobId=$v2 .*after its checkpoint" "$log" &&
	ok "after the restart, with dlsched.conf broken, victim2 was requeued after its checkpoint" ||
	ko "victim2 $v2: $(state_of "$v2"); $(grep -E "JobId=$v2|safety|stopping" "$log" | tail -3)"
# Slurm 22.05 loses track of a completing job's GPUs when reconfigured while it completes: the
# requeue first.
wait_for 20 is_state "$v2" PENDING || ko "victim2 not pending after its requeue: $(state_of "$v2")"
grep -q "preemptions in progress, the loan fence and reclaims follow .*safety settings only" "$log" &&
	ok "the restarted plugin said what it follows" || ko "no safety line in the log"
good pickyman
wait_done 150 "$v2" "$h2" || ko "the jobs did not finish in 150 s"
completed "$v2" && epochs_of "$v2" | is_sequence 8 && ok "victim2 completed, epochs 1..8 once each" ||
	ko "job $v2: $(sacct -n -X -P --duplicates -o State -j "$v2" | tr '\n' ' '); epochs $(epochs_of "$v2" | tr '\n' ' ')"
# (Before the GRES guard of select/dlsched_cons_tres, the high job started on n1 in the
# milliseconds before n1 registered again, and Slurm 22.05 then kept n1's GPUs counted as
# allocated after it: victim2 waited until the next reconfigure.)

# ---- a restart does not preempt the running jobs ----
good srtf
r=$(train steady 6)
wait_for 30 is_state "$r" RUNNING || ko "the job did not start"
sleep 2
restart_slurmctld
wait_done 90 "$r" || ko "the job did not finish in 90 s"
! grep -q "asked JobId=$r to checkpoint" "$log" && completed "$r" && epochs_of "$r" | is_sequence 6 &&
	[ "$(sacct -n -X -P --duplicates -o State -j "$r" | wc -l)" = 1 ] &&
	ok "a running job is not preempted by the first cycle after a restart (its nodes not registered yet)" ||
	ko "job $r: $(grep "JobId=$r" "$log" | tail -3)"

# ---- resizes keep what the user asked for ----
good mckp
# A typed elastic job: mckp starts it on all 4 idle GPUs of n1; the new size keeps the type.
e1=$(sbatch --parsable --requeue -J typed -o /dev/null -p train --gres=gpu:v100:1 --time=5 --dl-model=cifar10 \
	--dl-epochs=5 --dl-elastic=1:4 --comment "epoch_time_1gpu=8" --wrap 'sleep 20')
# (squeue writes gres:gpu:... on 22.05, gres/gpu:... from 24.11.)
wait_for 20 is_state "$e1" RUNNING && [ "$(squeue -h -j "$e1" -o %b | sed 's#^gres/#gres:#')" = "gres:gpu:v100:4" ] &&
	ok "the typed 1:4 job started at 4 GPUs of its type ($(squeue -h -j "$e1" -o %b))" ||
	ko "typed job $e1: $(state_of "$e1") $(squeue -h -j "$e1" -o %b); $(grep "JobId=$e1" "$log" | tail -2)"
scancel "$e1"
wait_done 20 "$e1"
# --gpus (GPUs per job): Slurm refuses a per-node count beside it, so it is never resized (before,
# it was checkpointed and requeued to grow, and the new size failed: a preemption for nothing).
# 40 epochs of 8 s on one GPU: growing to 4 is worth a restart to mckp. job_submit/dlsched refuses
# such a range at submission; a running job's comment is not checked again, so the range is added
# once it runs (as an operator may) to reach the scheduler's own guard.
err=$(sbatch --parsable -o /dev/null -p train --gpus=1 --time=10 --dl-elastic=1:4 --wrap true 2>&1) &&
	ko "an elastic --gpus job was accepted at submission ($err)" ||
	ok "job_submit/dlsched refuses an elastic range beside --gpus at submission"
e2=$(sbatch --parsable --requeue -J per-job -o /dev/null -p train --gpus=1 --time=10 --dl-model=cifar10 \
	--dl-epochs=40 --comment "epoch_time_1gpu=8" --wrap 'sleep 60')
wait_for 30 is_state "$e2" RUNNING || ko "the --gpus job did not start: $(state_of "$e2")"
scontrol update JobId="$e2" Comment="epoch_time_1gpu=8 gpus_min=1 gpus_max=4" ||
	ko "the --gpus job's comment could not be given an elastic range"
sleep 10
! grep -q "asked JobId=$e2 to checkpoint" "$log" && [ "$(total_gpus "$e2")" = 1 ] &&
	ok "the --gpus job is not checkpointed to be resized (it runs on its 1 GPU)" ||
	ko "--gpus job $e2: $(squeue -h -j "$e2" -o '%T %b %D'); $(grep "JobId=$e2" "$log" | tail -3)"
scancel "$e2"
wait_done 20 "$e2"

# ---- a bad Policy= keeps the loan fence ----
good aryl
demand="$dir/c/state/dlsched-inference-demand"
printf '0\n' >"$demand.tmp" && chmod 644 "$demand.tmp" && mv "$demand.tmp" "$demand"
wait_for 15 grep -q "n2 lent to training" "$log" && ok "demand 0 lends n2" || ko "n2 not lent: $(grep -E '^(loans|inference_demand)' "$st" | tr '\n' ' ')"
busy=$(sbatch --parsable --no-requeue -J busy -o /dev/null -p train -w n1 --gres=gpu:4 --time=5 --wrap 'sleep 60')
wait_for 20 is_state "$busy" RUNNING || ko "the job on n1 did not start"
broken
wait_for 10 grep -q "n2 taken back for inference (dlsched.conf does not load" "$log" &&
	ok "the bad dlsched.conf takes n2 back" || ko "n2 not taken back: $(grep -E 'n2' "$log" | tail -2)"
t=$(sbatch --parsable --requeue -J fenced -o /dev/null -p train --gres=gpu:4 --time=5 --wrap 'sleep 5')
sleep 8
[ "$(state_of "$t")" = PENDING ] && ok "no training job placed on the inference node while dlsched.conf is broken" ||
	ko "training job $t: $(state_of "$t") on $(node_of "$t")"
scancel "$t"  # a training job that cannot start blocks its partition's nodes in Slurm's main scheduler
i=$(sbatch --parsable -J inference -o /dev/null -p infer --gres=gpu:4 --time=2 --wrap 'sleep 1')
wait_done 30 "$i" && [ "$(sacct -n -X -P -o NodeList -j "$i" | tail -1)" = n2 ] && ok "an inference job runs on n2" ||
	ko "inference job $i: $(sacct -n -X -P -o State,NodeList -j "$i" | tail -1)"
scancel "$busy"
[ "$(stat_of stopping_write_errors)" = 0 ] && ok "no stopping-table write error" ||
	ko "stopping table: $(grep -E '^stopping_' "$st" | tr '\n' ' ')"

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all stop checks passed" || echo "$fails stop check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
