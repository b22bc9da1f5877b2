#!/usr/bin/env bash
# Elastic jobs that really grow and shrink in a real slurmctld (dlsched-cluster, dlsched mode,
# Policy=mckp, profiling on), two nodes of 4 GPUs (growing onto a second node would be slower for
# this model, so it grows and shrinks on one; multi-node sizes take the same path):
#  - a --dl-elastic=1:4 job submitted while n2 and half of n1 are busy starts on the 2 GPUs left
#    (more than the 1 it asked for: mckp gives it the spare one);
#  - when the rigid job beside it ends it grows into the idle GPUs (checkpoint, requeue at 4);
#  - when another rigid job arrives it shrinks back to 2 (checkpoint, requeue) and the rigid job
#    starts;
#  - it completes without repeating or skipping an epoch, at each size the emulated training
#    running at the GPUs Slurm gave it.
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, epochs_of, ...
profiled_cluster_test elastic

profiled_cluster_up --nodes 2 --gpus 4 --policy mckp
dlsched_conf Policy=mckp SchedInterval=1 CheckpointAt=iteration
grep -q "sched/dlsched: loaded .*allocation=mckp" "$log" && ok "sched/dlsched runs mckp" ||
	ko "no mckp in $(grep 'sched/dlsched: loaded' "$log" | tail -1)"
gpus_of() { squeue -h -j "$1" -o %b 2>/dev/null | grep -o '[0-9]*$'; }  # per node
nodes_of() { squeue -h -j "$1" -o %D 2>/dev/null; }
total_gpus() { local g n; g=$(gpus_of "$1"); n=$(nodes_of "$1"); echo $(( ${g:-0} * ${n:-0} )); }
running_with() { is_state "$1" RUNNING && [ "$(total_gpus "$1")" = "$2" ]; }
mkdir -p "$dir/out" "$dir/ck/elastic"
head -c 2000000 /dev/urandom >"$dir/data"

# n2 is busy throughout; rigid1 holds 2 GPUs of n1 for 20 s.
r0=$(sbatch --parsable --no-requeue -J busy -o /dev/null --gres=gpu:4 -w n2 --time=10 --wrap 'sleep 400')
r1=$(sbatch --parsable --no-requeue -J rigid1 -o /dev/null --gres=gpu:2 -w n1 --time=5 --wrap 'sleep 20')
wait_for 20 is_state "$r0" RUNNING && wait_for 20 is_state "$r1" RUNNING || ko "the rigid jobs did not start"
e=$(sbatch --parsable --requeue -J elastic -o "$dir/out/elastic.out" --open-mode=append --gres=gpu:1 --time=20 \
	--dl-model=cifar10 --dl-epochs=30 --dl-elastic=1:4 --comment "epoch_time_1gpu=8" \
	--wrap "exec $emu --model cifar10 --epochs 30 --epoch-time-1gpu 8 --noise 0 --storage-mbps 400 \
		--checkpoint-dir $dir/ck/elastic --data $dir/data --profiles $top/contribs/profiles")
wait_for 20 running_with "$e" 2 && ok "the 1:4 elastic job started on the 2 idle GPUs (asked for 1)" ||
	ko "elastic job $e: $(state_of "$e") with $(total_gpus "$e") GPUs"
wait_done 40 "$r1" || ko "rigid1 did not end"
wait_for 40 running_with "$e" 4 && ok "it grew to 4 GPUs when rigid1 ended" ||
	ko "elastic job $e: $(state_of "$e") with $(total_gpus "$e") GPUs; $(grep "JobId=$e" "$log" | tail -3)"
grep -q "asked JobId=$e to checkpoint" "$log" && ok "by checkpoint and requeue" || ko "no checkpoint request for $e"
sleep 4
r2=$(sbatch --parsable --no-requeue -J rigid2 -o /dev/null --gres=gpu:2 --time=5 --wrap 'sleep 30')
wait_for 40 is_state "$r2" RUNNING && ok "a rigid 2-GPU job arriving starts ($(squeue -h -j "$r2" -o %N))" ||
	ko "rigid2 $r2: $(state_of "$r2")"
wait_for 40 running_with "$e" 2 && ok "the elastic job shrank to 2 GPUs to admit it" ||
	ko "elastic job $e: $(state_of "$e") with $(total_gpus "$e") GPUs"
# A job that ended on a checkpoint request shows as ended until sched/dlsched requeues it: done is
# when accounting says COMPLETED.
final_state() { [ "$(sacct -n -X -P -o State -j "$1" | tail -n1)" = COMPLETED ] && ! squeue -h -j "$1" 2>/dev/null | grep -q .; }
wait_for 300 final_state "$e" && wait_done 60 "$r2" || ko "the jobs did not finish in 300 s"
scancel "$r0"
completed "$e" && ok "the elastic job completed" || ko "job $e: $(sacct -n -X -P --duplicates -o State -j "$e" | tr '\n' ' ')"
sizes=$(sacct -n -X -P --duplicates -o AllocTRES -j "$e" | grep -o 'gres/gpu=[0-9]*' | cut -d= -f2 | paste -sd,)
runs=$(echo "$sizes" | tr ',' '\n' | wc -l)
[ "$runs" -ge 3 ] && ok "its runs' GPUs in accounting: $sizes" || ko "runs of $e: $sizes"
epochs_of "$e" | is_sequence 30 && ok "without repeating or skipping an epoch (1..30 once each)" ||
	ko "epochs of $e: $(epochs_of "$e" | tr '\n' ' ')"

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all elastic checks passed" || echo "$fails elastic check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
