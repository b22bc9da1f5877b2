#!/usr/bin/env bash
# scontrol reconfigure loses nothing dlsched is in the middle of (dlsched-cluster, dlsched mode,
# profiling on; one training node n1 and two inference nodes n2, n3 of 4 GPUs each). From Slurm
# 23.11 a reconfigure is a restart: slurmctld forks and execs a new process, where every plugin
# starts again and what it kept in memory only is gone; up to 23.02 it is the same process. One
# reconfigure while, at once:
#  (a) a job is in the stopping table (asked to checkpoint for a high-QoS job, writing its
#      checkpoint, its grace running): it is requeued after its checkpoint, not before;
#  (b) a job is held for its deadline (DeadlineInfeasible=hold): it stays held;
#  (c) an inference node is lent to training: it stays lent, and its training job keeps running;
#  (d) a reclaim is under way (the other inference node, a job there that ignores the checkpoint
#      signal): it goes on, and that job is requeued off the node when ReclaimTimeout= runs out,
#      counted from the reclaim before the reconfigure.
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh" # profiled_cluster_test, wait_for, state_of, ...
profiled_cluster_test reconfigure
t0=$(date +%s)

profiled_cluster_up --nodes 1 --inference-nodes 2 --gpus 4 --policy pickyman
demand="$dir/c/state/dlsched-inference-demand"
loans="$dir/c/state/dlsched-loans"
declare_demand() { printf "$1" >"$demand.tmp" && chmod 644 "$demand.tmp" && mv "$demand.tmp" "$demand"; }
node_of() { squeue -h -j "$1" -o %N 2>/dev/null; }
runs_on() { is_state "$1" RUNNING && [ "$(node_of "$1")" = "$2" ]; } # runs_on JOBID NODE
lent() { grep -qx "$1" "$loans" 2>/dev/null; }
since_log() { tail -n +"$((lines + 1))" "$log"; } # the slurmctld log since the reconfigure
declare_demand '1\n'
# pickyman (high QoS preempts, two steps) with the deadline admission and Aryl's loaning.
dlsched_conf Policy=pickyman AdmissionPolicy=deadline DeadlineInfeasible=hold LoaningPolicy=aryl \
	InferencePartition=infer ReclaimTimeout=30 PreemptGrace=150 CheckpointAt=iteration SchedInterval=1
grep -q "sched/dlsched: loaded .*preset=pickyman .*admission=deadline .*loaning=aryl" "$log" &&
	ok "sched/dlsched runs pickyman with the deadline admission and aryl's loaning" ||
	ko "dlsched.conf: $(grep 'sched/dlsched: loaded' "$log" | tail -n1)"

# ---- (a) the victim: an emulated cifar10 job on n1 (its checkpoint: 90 MB at 1.5 MB/s, 60 s) ----
mkdir -p "$dir/out" "$dir/ck/victim"
head -c 2000000 /dev/urandom >"$dir/data"
v=$(sbatch --parsable --requeue --qos=normal -J victim -o "$dir/out/victim.out" --open-mode=append -p train -w n1 \
	--gres=gpu:4 --time=20 --dl-model=cifar10 --dl-epochs=8 --comment "epoch_time_1gpu=10.5" \
	--wrap "exec $emu --model cifar10 --epochs 8 --epoch-time-1gpu 10.5 --noise 0 --storage-mbps 1.5 \
		--checkpoint-dir $dir/ck/victim --data $dir/data --profiles $top/contribs/profiles")
wait_for 30 is_state "$v" RUNNING || ko "the victim did not start: $(state_of "$v")"
sleep 5 # an epoch in the profile DB
# ---- (b) a job held for its deadline: 60 epochs of 14 s on its one GPU, 400 s to its deadline ----
d=$(sbatch --parsable --qos=deadline -J held -o /dev/null -p train --gres=gpu:1 --deadline=now+400seconds \
	--time-min=1 --time=10 --dl-model=cifar10 --dl-epochs=60 --comment "epoch_time_1gpu=14" --wrap 'sleep 1')
held() { [ "$(squeue -h -j "$d" -o %Q 2>/dev/null)" = 0 ] && [[ "$(squeue -h -j "$d" -o %r)" == *held* ]]; }
wait_for 15 held || ko "the deadline job was not held: $(squeue -h -j "$d" -o '%T %Q %r')"

# ---- (c) and (d): both inference nodes lent, a job on each that ignores the checkpoint signal ----
# Of the high QoS, so that the high-QoS job below preempts the victim only.
declare_demand '0\n'
wait_for 20 sh -c "grep -qx n2 '$loans' && grep -qx n3 '$loans'" 2>/dev/null || ko "n2 and n3 not lent: $(cat "$loans" 2>&1)"
stubborn() { sbatch --parsable --requeue --qos=high -J "stubborn-$1" -o /dev/null -p train -w "$1" --gres=gpu:4 --time=10 \
	--wrap 'trap "" USR1; sleep 300'; }
s2=$(stubborn n2) s3=$(stubborn n3)
wait_for 30 runs_on "$s2" n2 && wait_for 10 runs_on "$s3" n3 ||
	ko "stubborn jobs: $s2 $(state_of "$s2") on $(node_of "$s2"), $s3 $(state_of "$s3") on $(node_of "$s3")"
# ---- (a) the high-QoS job asks the victim to checkpoint ----
# Not requeueable: it never goes to a lent node, so the victim's GPUs are the only ones for it.
h=$(sbatch --parsable --no-requeue --qos=high -J high -o /dev/null -p train --gres=gpu:4 --time=5 --wrap 'sleep 3')
wait_for 20 grep -q "asked JobId=$v to checkpoint" "$log" || ko "no checkpoint request for $v"

# ---- (d) then one inference node is taken back ----
# Inference needs one of the two nodes again.
declare_demand '0.5\n'
wait_for 20 grep -qE "^reclaim n[23] [0-9]+$" "$loans" 2>/dev/null || ko "no reclaim in $loans: $(grep -E 'n[23]' "$log" | tail -n2)"
x=$(sed -n 's/^reclaim \(n[23]\) .*/\1/p' "$loans" | head -n1)
since=$(sed -n "s/^reclaim $x //p" "$loans")
y=n2 sx=$s3 sy=$s2
[ "$x" = n2 ] && y=n3 sx=$s2 sy=$s3
wait_for 15 grep -q "asked JobId=$sx to checkpoint" "$log" || ko "no checkpoint request for $sx on $x"
held_prio=$(squeue -h -j "$d" -o %Q)
if runs_on "$v" n1 && ! grep -q "requeued JobId=$v " "$log" && [ "$held_prio" = 0 ] && lent "$y" && runs_on "$sy" "$y" &&
	runs_on "$sx" "$x"; then
	ok "before the reconfigure: $v checkpointing, $d held, $y lent ($sy on it), $x being reclaimed since $since ($sx on it)"
else
	ko "before the reconfigure: $v $(state_of "$v"); $d priority $held_prio; loans $(tr '\n' ' ' <"$loans"); $sx $(state_of "$sx"), $sy $(state_of "$sy")"
fi

# ---- the reconfigure, 12 s into the reclaim ----
sleep 12
pid=$(cat "$dir/c/pids/slurmctld.pid")
loads=$(grep -c "sched/dlsched: loaded" "$log")
lines=$(wc -l <"$log")
t_reconf=$(date +%s)
scontrol reconfigure >/dev/null || ko "scontrol reconfigure failed"
wait_for 30 sh -c "[ \$(grep -c 'sched/dlsched: loaded' '$log') -gt $loads ]" && wait_for 30 scontrol ping >/dev/null ||
	ko "sched/dlsched did not load dlsched.conf again, or slurmctld does not answer"
now_pid=$(cat "$dir/c/pids/slurmctld.pid")
[ "$now_pid" = "$pid" ] && how="the same slurmctld (pid $pid)" || how="a new slurmctld (pid $pid -> $now_pid)"
echo "# reconfigure $((t_reconf - since)) s into the reclaim: $how"

# (b) the hold, right away and for the rest of the test.
sleep 3
held && ok "after the reconfigure $d is still held for its deadline ($how): '$(squeue -h -j "$d" -o %r)'" ||
	ko "held job after the reconfigure: $(squeue -h -j "$d" -o '%T %Q %r')"
# (d) the reclaim: the job on x is requeued off it when ReclaimTimeout (30 s) runs out, counted
# from the reclaim before the reconfigure (a reclaim started again by the new process would take
# it off 12 + 30 s after the first); not at once, not never. The time is that of the log line.
wait_for 60 sh -c "! squeue -h -j $sx -o %T%N | grep -qx RUNNING$x" || ko "$sx still runs on $x: $(squeue -h -j "$sx" -o '%T %N')"
line=$(since_log | grep -E "requeued JobId=$sx |late reclaim: $x" | head -n1)
at=$(date -d "$(echo "$line" | sed -n 's/^\[\([^]]*\)\].*/\1/p')" +%s 2>/dev/null || echo 0)
off=$((at - since))
[ "$off" -ge 27 ] && [ "$off" -le 39 ] &&
	ok "the reclaim of $x went on: $sx requeued off it $off s after the reclaim (ReclaimTimeout=30): ${line#*] }" ||
	ko "reclaim of $x: $sx off it $off s after the reclaim; $(since_log | grep -E "JobId=$sx|$x" | tail -n2)"
# (a) the victim: requeued once its checkpoint is written (about 60 s after the request).
wait_for 90 sh -c "tail -n +$((lines + 1)) '$log' | grep -q 'requeued JobId=$v .*after its checkpoint'" &&
	grep -q "signal .*: checkpoint at epoch" "$dir/out/victim.out" &&
	ok "the victim was requeued after its checkpoint: $(since_log | grep -o "requeued JobId=$v .*" | head -n1 | cut -c1-100)" ||
	ko "victim $v: $(state_of "$v"); $(grep "JobId=$v" "$log" | tail -n2); $(tail -n2 "$dir/out/victim.out")"
# (c) the loan: y still lent, its job still there, never taken back.
lent "$y" && runs_on "$sy" "$y" && ! since_log | grep -q "$y taken back" &&
	ok "$y is still lent to training and $sy still runs on it" ||
	ko "loan of $y: $(tr '\n' ' ' <"$loans"); $sy $(state_of "$sy") on $(node_of "$sy"); $(since_log | grep "$y" | tail -n2)"
held && ok "$d is still held at the end ($(($(date +%s) - t_reconf)) s after the reconfigure)" ||
	ko "held job at the end: $(squeue -h -j "$d" -o '%T %Q %r')"
wait_for 30 sh -c "squeue -h -j $h -o %T | grep -qE 'RUNNING|COMPLETING' || sacct -n -X -P -o State -j $h | grep -q COMPLETED" &&
	ok "the high-QoS job got the victim's GPUs" || ko "high job $h: $(squeue -h -j "$h" -o '%T %r')"
grep -q "^stopping_write_errors=0$" "$st" && ok "no stopping-table write error" ||
	ko "stopping table: $(grep -E '^stopping_' "$st" | tr '\n' ' ')"
scancel "$v" "$h" "$d" "$s2" "$s3"

"$tool" down --dir "$dir/c" >/dev/null
echo "test-reconfigure: $(($(date +%s) - t0)) s"
[ $fails -eq 0 ] && echo "all reconfigure checks passed" || echo "$fails reconfigure check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
