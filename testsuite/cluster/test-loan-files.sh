#!/usr/bin/env bash
# The files of capacity loaning under slurmctld's locks (dlsched-cluster, dlsched mode, Policy=aryl,
# one training and one inference node, no jobs):
#  - a loan state file that others could have written (not owned by root or SlurmUser) is refused;
#  - a loan state file that cannot be written is retried, and logged, until it can: memory and file
#    agree again (before, the node stayed lent in memory only);
#  - junk in InferenceDemandFile reaches the stats file as printable text only;
#  - a FIFO as InferenceDemandFile is refused without blocking: slurmctld keeps answering (before,
#    the snapshot opened it under the write locks and every RPC waited for a writer).
#  - a reclaim does not cut short the grace a job was given to checkpoint: with ReclaimTimeout=
#    lowered after the job was asked to stop, the late reclaim leaves it to its grace (before, it was
#    requeued at the new timeout);
#  - a reclaim survives a slurmctld restart: with dlsched.conf broken (Slurm decides, every lent node
#    is taken back without a checkpoint request), the training job left on the node after a restart is
#    requeued at ReclaimTimeout= counted from the reclaim (before, the restarted slurmctld forgot the
#    reclaim and the job ran on the inference node to its end).
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, ...
profiled_cluster_test loan-files

profiled_cluster_up --nodes 1 --inference-nodes 1 --gpus 4 --policy aryl
demand="$dir/c/state/dlsched-inference-demand"
loans="$dir/c/state/dlsched-loans"
stat_of() { sed -n "s/^$1=//p" "$st"; }
lists_n2() { grep -qx n2 "$1" 2>/dev/null; }
declare_demand() { printf "$1" >"$demand.tmp" && chmod 644 "$demand.tmp" && mv "$demand.tmp" "$demand"; }
declare_demand '1\n'
dlsched_conf Policy=aryl SchedInterval=1 InferencePartition=infer

# ---- a loan state file owned by someone else is refused ----
printf 'n2\n' >"$loans.tmp" && chmod 644 "$loans.tmp" && chown 65534 "$loans.tmp" && mv "$loans.tmp" "$loans"
sleep 4
grep -q "loan state $loans is owned by uid 65534, neither root nor SlurmUser: refused" "$log" &&
	! grep -q "n2 taken back" "$log" && [ "$(stat_of loaned_nodes)" = 0 ] &&
	ok "a loan state file owned by uid 65534 is refused (n2 not lent)" ||
	ko "foreign loan state: loaned_nodes=$(stat_of loaned_nodes); $(grep -E 'loan state|n2' "$log" | tail -n2)"
rm -f "$loans"

# ---- a loan state file that cannot be written: retried until it is ----
dlsched_conf Policy=aryl SchedInterval=1 InferencePartition=infer "LoanStateFile=$dir/c/state/later/loans"
declare_demand '0\n'
wait_for 15 grep -q "n2 lent to training" "$log" &&
	wait_for 10 grep -q "cannot write the loan state $dir/c/state/later/loans: .*retrying" "$log" &&
	ok "a failed loan state write is logged and retried" ||
	ko "failed write: $(grep -E 'loan state|n2' "$log" | tail -n2)"
mkdir "$dir/c/state/later"
wait_for 15 lists_n2 "$dir/c/state/later/loans" &&
	ok "once it can be written, the loan state file lists n2 ($(grep -o 'written after [0-9]* failed tries' "$log" | tail -n1))" ||
	ko "loan state file after the directory came: $(cat "$dir/c/state/later/loans" 2>&1)"

# ---- junk in the demand file: printable in the stats file ----
declare_demand '\033[31mEVIL\007\n'
sleep 3
status=$(stat_of inference_demand_status)
! grep -q $'[\033\007]' "$st" && [[ "$status" == *"'?[31mEVIL?'"* ]] &&
	ok "junk in the demand file is shown printable ($(echo "$status" | grep -o "'.*'"))" ||
	ko "stats: $(grep -a inference_demand_status "$st" | cat -v)"

# ---- a FIFO as the demand file: refused, nothing blocks ----
rm -f "$demand"
mkfifo -m 644 "$demand"
sleep 3
timeout 10 squeue >/dev/null 2>&1 && timeout 10 scontrol ping | grep -q UP &&
	wait_for 5 grep -q "is not a regular file" "$st" &&
	ok "a FIFO as InferenceDemandFile is refused; slurmctld answers" ||
	ko "FIFO demand file: $(grep -a inference_demand_status "$st")"
# Before the fix the controller waited for a writer: release it, so the cluster can go down.
for i in 1 2 3; do timeout 2 sh -c "echo 1 >'$demand'" 2>/dev/null; done
rm -f "$demand"

# ---- a late reclaim leaves a job its checkpoint grace ----
node_of() { squeue -h -j "$1" -o %N 2>/dev/null; }
on_n2() { is_state "$1" RUNNING && [ "$(node_of "$1")" = n2 ]; }
# A training job that ignores the checkpoint signal, on the lent node n2.
stubborn() { sbatch --parsable --requeue -J "$1" -o /dev/null -p train -w n2 --gres=gpu:4 --time=10 \
	--wrap 'trap "" USR1; sleep 300'; }
dlsched_conf Policy=aryl SchedInterval=1 InferencePartition=infer ReclaimTimeout=40
declare_demand '0\n'
wait_for 15 lists_n2 "$loans" || ko "n2 not lent: $(grep -E 'n2' "$log" | tail -n2)"
g=$(stubborn grace)
freed=$(grep -c "n2 free for inference" "$log")
wait_for 30 on_n2 "$g" || ko "job $g: $(state_of "$g") on $(node_of "$g")"
declare_demand '1\n'
wait_for 15 grep -q "asked JobId=$g to checkpoint" "$log" &&
	grep -qE "^reclaim n2 [0-9]+$" "$loans" && ok "n2 taken back, job $g asked to checkpoint (40 s grace); the reclaim is in the loan state file" ||
	ko "no checkpoint request for $g: $(grep -E "JobId=$g|n2" "$log" | tail -n3); $(cat "$loans")"
# A shorter timeout now: the reclaim is late, the job keeps the grace it was given.
dlsched_conf Policy=aryl SchedInterval=1 InferencePartition=infer ReclaimTimeout=5
wait_for 15 grep -q "late reclaim: n2" "$log" || ko "no late reclaim: $(grep n2 "$log" | tail -n2)"
sleep 8
on_n2 "$g" && grep -q "late reclaim of n2: 1 job(s) asked to checkpoint keep their grace" "$log" &&
	ok "the late reclaim leaves job $g its grace" || ko "job $g: $(state_of "$g") on $(node_of "$g"); $(grep -E "JobId=$g" "$log" | tail -n2)"
wait_for 40 sh -c "! squeue -h -j $g -o %T%N | grep -qx RUNNINGn2" &&
	grep -q "requeued JobId=$g (.*its grace ran out" "$log" &&
	wait_for 15 sh -c "[ \$(grep -c 'n2 free for inference' '$log') -gt $freed ]" &&
	ok "requeued when its grace ran out; $(grep -o 'n2 free for inference [0-9]* s after it was taken back' "$log" | tail -n1)" ||
	ko "job $g after its grace: $(state_of "$g") on $(node_of "$g"); $(grep -E "JobId=$g|n2" "$log" | tail -n3)"
scancel "$g"

# ---- a reclaim survives a slurmctld restart ----
dlsched_conf Policy=aryl SchedInterval=1 InferencePartition=infer ReclaimTimeout=20
declare_demand '0\n'
wait_for 15 lists_n2 "$loans" || ko "n2 not lent again: $(grep -E 'n2' "$log" | tail -n2)"
j=$(stubborn restart)
wait_for 30 on_n2 "$j" || ko "job $j: $(state_of "$j") on $(node_of "$j")"
taken=$(grep -c "n2 taken back" "$log")
dlsched_conf Policy=nonsense SchedInterval=1 InferencePartition=infer ReclaimTimeout=20
wait_for 10 sh -c "[ \$(grep -c 'n2 taken back' '$log') -gt $taken ]" && wait_for 10 grep -qE "^reclaim n2 [0-9]+$" "$loans" ||
	ko "broken dlsched.conf: n2 not taken back: $(grep n2 "$log" | tail -n2)"
since=$(sed -n 's/^reclaim n2 //p' "$loans")
restart_slurmctld
lines=$(wc -l <"$log")
wait_for 40 sh -c "tail -n +$lines '$log' | grep -q 'late reclaim: n2'" && wait_for 10 sh -c "! squeue -h -j $j -o %T%N | grep -qx RUNNINGn2" &&
	ok "after a restart, the reclaim goes on: job $j requeued off n2 $(( $(date +%s) - since )) s after the reclaim (ReclaimTimeout=20)" ||
	ko "after a restart: job $j $(state_of "$j") on $(node_of "$j"); $(tail -n +"$lines" "$log" | grep -E 'n2|reclaim' | tail -n2)"
late=$(tail -n +"$lines" "$log" | sed -n 's/.*late reclaim: n2 still holds training jobs \([0-9]*\) s after.*/\1/p' | head -n1)
[ -n "$late" ] && [ "$late" -ge 20 ] && [ "$late" -le 35 ] && ok "late counted from the reclaim before the restart ($late s)" ||
	ko "late reclaim after the restart at '$late' s"
scancel "$j"

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all loan file checks passed" || echo "$fails loan file check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
