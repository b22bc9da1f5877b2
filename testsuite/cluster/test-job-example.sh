#!/usr/bin/env bash
# The user guide's job script (doc/examples/train.sbatch with train.py, a PyTorch loop) in a real
# slurmctld (dlsched-cluster, dlsched mode, Policy=pickyman, profiling on), one node of 4 GPUs:
#  - its #SBATCH --dl-* lines reach dlsched (the profile DB's job row: model and epochs);
#  - it reports its epochs through the Python helper;
#  - a high-QoS job that needs the node makes sched/dlsched ask it to checkpoint: the signal goes to
#    the batch script's process, which exec'd srun, which forwards it to python (the step is not
#    aborted, as it is without exec); it saves mid-epoch and exits, and is requeued after its
#    checkpoint report;
#  - its second run loads the checkpoint, reports the load and completes: every epoch once in the
#    profile DB (1..N), one save and one load.
# Only what a site changes is changed: the checkpoint directory, the path of the Python helper and
# of train.py, /usr/bin/python3 (the one with python3-torch), and more epochs.
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector, dlsched-ingestd, or
# PyTorch for /usr/bin/python3 (apt-get install python3-torch).
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, epochs_of, ...
py=/usr/bin/python3
"$py" -c 'import torch' 2>/dev/null || { echo "SKIP: no PyTorch for $py (apt-get install python3-torch)"; exit 77; }
profiled_cluster_test job-example

profiled_cluster_up --nodes 1 --gpus 4 --policy pickyman
dlsched_conf Policy=pickyman SchedInterval=1 PreemptGrace=60
mkdir -p "$dir/job"
epochs=60
sed -e "s|/shared/checkpoints/train-example|$dir/ck|" \
	-e "s|/usr/local/share/dlsched/python|$top/contribs/progress|" \
	-e "s|--dl-epochs=20|--dl-epochs=$epochs|" \
	-e "s|exec srun python3 train.py|exec srun $py $top/doc/examples/train.py|" \
	"$top/doc/examples/train.sbatch" >"$dir/job/train.sbatch"
for change in "$dir/ck" "$top/contribs/progress" "dl-epochs=$epochs" "srun $py"; do
	grep -q -- "$change" "$dir/job/train.sbatch" || { echo "Bail out! train.sbatch changed: no '$change' after the edits"; exit 1; }
done
j=$(cd "$dir/job" && sbatch --parsable train.sbatch)
out="$dir/job/train-$j.out"
wait_for 60 is_state "$j" RUNNING || ko "the example job did not start: $(state_of "$j")"
two_epochs() { [ "$(epochs_of "$j" | wc -l)" -ge 2 ]; }
wait_for 90 two_epochs && ok "it reports its epochs (the profile DB has $(epochs_of "$j" | wc -l))" ||
	ko "no epochs of job $j in the profile DB; output: $(tail -3 "$out" 2>/dev/null)"
# jobs: cluster,job_id,user,model,gpus,nodes,epochs_total,...
row=$("$dbtool" --db "$db" export jobs | awk -F, -v j="$j" '$2 == j')
awk -F, -v e="$epochs" '$4 == "cifar10" && $7 + 0 == e { f = 1 } END { exit !f }' <<<"$row" &&
	ok "#SBATCH --dl-model and --dl-epochs reached dlsched (job row: $row)" || ko "job row '$row'"

h=$(sbatch --parsable --qos=high -J high -o /dev/null --gres=gpu:4 --time=5 --wrap 'sleep 3')
wait_for 60 grep -q "asked JobId=$j to checkpoint" "$log" && ok "sched/dlsched asked the example job to checkpoint" ||
	ko "no checkpoint request for $j: $(grep 'asked JobId' "$log" | tail -2)"
wait_for 60 grep -q "checkpointed at epoch" "$out" &&
	ok "the signal reached python through exec srun: '$(grep -m1 'checkpointed at epoch' "$out")'" ||
	ko "no checkpoint in the job's output: $(tail -3 "$out")"
# Without exec, bash dies of SIGUSR1 and Slurm aborts the step: python then saves on SIGTERM within
# KillWait ("srun: Job step aborted" in the output), not within dlsched's grace.
grep -q "Job step aborted" "$out" && ko "the batch script died of the request: $(grep -m1 'aborted' "$out")" ||
	ok "the batch script lived through the request (no aborted step)"
wait_for 60 grep -q "requeued JobId=$j .*after its checkpoint" "$log" && ok "requeued after its checkpoint report" ||
	ko "requeue of $j: $(grep "requeued JobId=$j" "$log" | tail -1)"
wait_done 60 "$h" || ko "the high-priority job did not finish"
wait_for 120 grep -q "resumed at epoch" "$out" && ok "its second run resumed: '$(grep -m1 'resumed at epoch' "$out")'" ||
	ko "no resume in the job's output: $(tail -3 "$out")"
wait_done 300 "$j" || ko "the example job did not finish"
completed "$j" && ok "the example job completed" || ko "job $j: $(sacct -n -X -P --duplicates -o State -j "$j" | tr '\n' ' ')"
epochs_of "$j" | is_sequence "$epochs" && ok "every epoch once in the profile DB (1..$epochs)" ||
	ko "epochs of $j: $(epochs_of "$j" | wc -l) rows, $(epochs_of "$j" | head -3 | tr '\n' ' ')..."
# --dl-checkpoint-dir=...-%j: the job's own directory (a job submitted again starts over).
[ -n "$(ls -A "$dir/ck-$j" 2>/dev/null)" ] && ok "its checkpoints are in its own directory ck-$j (%j expanded)" ||
	ko "no checkpoint in $dir/ck-$j: $(ls "$dir" | tr '\n' ' ')"
ck=$("$dbtool" --db "$db" export checkpoints | awk -F, -v j="$j" '$2 == j { print $3 ":" $5 }' | sort | tr '\n' ' ')
[[ "$ck" == *"0:save"* ]] && [[ "$ck" == *"1:load"* ]] && ok "the save of run 0 and the load of run 1 are in the profile DB ($ck)" ||
	ko "checkpoints of $j: '$ck'"

[ "$fails" -eq 0 ] || { echo "cluster kept for inspection: $dir"; trap - EXIT; "$tool" down --dir "$dir/c" >/dev/null 2>&1; }
exit $((fails > 0))
