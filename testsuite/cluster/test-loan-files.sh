#!/usr/bin/env bash
# The files of capacity loaning under slurmctld's locks (dlsched-cluster, dlsched mode, Policy=aryl,
# one training and one inference node, no jobs):
#  - a loan state file that others could have written (not owned by root or SlurmUser) is refused;
#  - a loan state file that cannot be written is retried, and logged, until it can: memory and file
#    agree again (before, the node stayed lent in memory only);
#  - junk in InferenceDemandFile reaches the stats file as printable text only;
#  - a FIFO as InferenceDemandFile is refused without blocking: slurmctld keeps answering (before,
#    the snapshot opened it under the write locks and every RPC waited for a writer).
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

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all loan file checks passed" || echo "$fails loan file check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
