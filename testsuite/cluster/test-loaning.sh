#!/usr/bin/env bash
# Capacity loaning in a real slurmctld (dlsched-cluster, dlsched mode, Policy=aryl, profiling on):
# one training node and one inference node of 4 GPUs each, InferencePartition=infer.
#  - with no demand declared nothing is lent; a demand file that others may write is refused;
#  - demand 0 lends the inference node: a requeueable training job runs there, a --no-requeue job
#    is kept off it (it may not be taken back), and an inference job cannot start on it;
#  - demand 1 takes it back: the training job there is asked to checkpoint, requeued, and the node
#    is free within ReclaimTimeout=; an inference job submitted then starts on it; the training job
#    resumes on the training node without repeating or skipping an epoch; no late reclaim;
#  - the loan state survives a restart of slurmctld.
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, epochs_of, ...
profiled_cluster_test loaning

profiled_cluster_up --nodes 1 --inference-nodes 1 --gpus 4 --policy aryl
demand="$dir/c/state/dlsched-inference-demand"
dlsched_conf Policy=aryl SchedInterval=1 ReclaimTimeout=30 CheckpointAt=iteration InferencePartition=infer
grep -q "sched/dlsched: loaded .*preset=aryl.*loaning=aryl" "$log" && ok "sched/dlsched runs aryl" ||
	ko "no aryl in $(grep 'sched/dlsched: loaded' "$log" | tail -1)"
stat_of() { sed -n "s/^$1=//p" "$st"; }
node_of() { squeue -h -j "$1" -o %N 2>/dev/null; }
stat_is() { [ "$(stat_of "$1")" = "$2" ]; }
declare_demand() { printf '%s\n' "$1" >"$demand.tmp" && chmod 644 "$demand.tmp" && mv "$demand.tmp" "$demand"; }

# ---- nothing declared: nothing lent; a file others may write is refused ----
[ "$(stat_of loans)" = 0 ] && [ "$(stat_of loaned_nodes)" = 0 ] && grep -q "no demand declared" "$st" &&
	ok "no demand declared: nothing lent ($(stat_of inference_demand_status | cut -c1-60)...)" ||
	ko "stats: $(grep -E '^(loans|loaned_nodes|inference_demand)' "$st" | tr '\n' ' ')"
declare_demand 0
chmod 666 "$demand"
sleep 3
[ "$(stat_of loans)" = 0 ] && grep -q "writable by nobody else: ignored" "$st" &&
	ok "a demand file others may write is ignored" || ko "stats: $(grep -E '^(loans|inference_demand)' "$st" | tr '\n' ' ')"

# ---- demand 0: the inference node is lent ----
declare_demand 0
wait_for 15 grep -q "n2 lent to training" "$log" && [ "$(stat_of loaned_nodes)" = 1 ] &&
	grep -qx n2 "$dir/c/state/dlsched-loans" && ok "demand 0 lends n2 (loan state file written)" ||
	ko "n2 not lent: $(grep -E '^(loans|loaned_nodes|inference_demand)' "$st" | tr '\n' ' ')"

mkdir -p "$dir/out" "$dir/ck"
head -c 2000000 /dev/urandom >"$dir/data"
# An emulated cifar10 job on 4 GPUs: EPOCHS epochs of about 3 s.
train() {  # train NAME EPOCHS [sbatch options]
	local name="$1" n="$2"
	mkdir -p "$dir/ck/$name"
	sbatch --parsable --requeue -J "$name" -o "$dir/out/$name.out" --open-mode=append -p train \
		--gres=gpu:4 --time=20 --dl-model=cifar10 --dl-epochs="$n" --comment "epoch_time_1gpu=10.5" "${@:3}" \
		--wrap "exec $emu --model cifar10 --epochs $n --epoch-time-1gpu 10.5 --noise 0 --storage-mbps 100 \
			--checkpoint-dir $dir/ck/$name --data $dir/data --profiles $top/contribs/profiles"
}

# A --no-requeue job first: it may only go to the training node.
c=$(sbatch --parsable --no-requeue -J norequeue -o /dev/null -p train --gres=gpu:4 --time=5 --wrap 'sleep 30')
wait_for 20 is_state "$c" RUNNING && [ "$(node_of "$c")" = n1 ] &&
	ok "the --no-requeue job runs on the training node n1" || ko "job $c: $(state_of "$c") on $(node_of "$c")"
a=$(train lent 15)
wait_for 20 is_state "$a" RUNNING && [ "$(node_of "$a")" = n2 ] &&
	ok "a requeueable training job runs on the lent node n2" || ko "job $a: $(state_of "$a") on $(node_of "$a")"
i0=$(sbatch --parsable -J infer-early -o /dev/null -p infer --gres=gpu:1 --time=2 --wrap 'sleep 1')
sleep 4
[ "$(state_of "$i0")" = PENDING ] && ok "an inference job does not start on the lent node" ||
	ko "inference job $i0: $(state_of "$i0") on $(node_of "$i0")"
scancel "$i0"
sleep 5  # an epoch or two done

# ---- demand 1: the node is taken back within ReclaimTimeout ----
t0=$(date +%s)
declare_demand 1
wait_for 15 grep -q "n2 taken back for inference" "$log" && ok "demand 1 takes n2 back" ||
	ko "no reclaim: $(grep -E '^(reclaims|inference_demand)' "$st" | tr '\n' ' ')"
inf=$(sbatch --parsable -J inference -o /dev/null -p infer --gres=gpu:4 --time=2 --wrap 'sleep 2')
grep -q "asked JobId=$a to checkpoint" "$log" && ok "the training job on n2 was asked to checkpoint" ||
	ko "no checkpoint request for $a: $(grep "JobId=$a" "$log" | tail -3)"
wait_for 40 grep -q "n2 free for inference" "$log"
freed=$(sed -n 's/.*n2 free for inference \([0-9]*\) s after.*/\1/p' "$log" | tail -1)
[ -n "$freed" ] && [ "$freed" -le 30 ] && ok "n2 free for inference $freed s after it was taken back (timeout 30 s)" ||
	ko "n2 not freed in time: '$freed'; $(grep -E 'n2|late reclaim' "$log" | tail -3)"
wait_done 40 "$inf" && [ "$(sacct -n -X -P -o NodeList -j "$inf" | tail -1)" = n2 ] &&
	ok "the inference job ran on n2 ($(( $(date +%s) - t0 )) s after the demand rose)" ||
	ko "inference job $inf: $(sacct -n -X -P -o State,NodeList -j "$inf" | tail -1)"
wait_done 150 "$a" "$c" || ko "the jobs did not finish in 150 s"
completed "$a" && ok "the training job taken off n2 completed" ||
	ko "job $a: $(sacct -n -X -P --duplicates -o State -j "$a" | tr '\n' ' ')"
[ "$(sacct -n -X -P -o NodeList -j "$a" | tail -1)" = n1 ] && ok "it resumed on the training node n1" ||
	ko "job $a last ran on $(sacct -n -X -P -o NodeList -j "$a" | tail -1)"
epochs_of "$a" | is_sequence 15 && ok "without repeating or skipping an epoch (1..15 once each)" ||
	ko "epochs of $a: $(epochs_of "$a" | tr '\n' ' ')"
[ "$(stat_of late_reclaims)" = 0 ] && [ "$(stat_of reclaims)" = 1 ] && [ "$(stat_of loaned_nodes)" = 0 ] &&
	ok "stats: $(grep -E '^(loans|reclaims|late_reclaims|loaned_nodes)=' "$st" | tr '\n' ' ')" ||
	ko "stats: $(grep -E '^(loans|reclaims|late_reclaims|loaned_nodes)=' "$st" | tr '\n' ' ')"

# ---- the loan state survives a restart ----
declare_demand 0
wait_for 15 stat_is loaned_nodes 1 || ko "n2 not lent again"
restart_slurmctld
sleep 3
loans_before=$(grep -c "n2 lent to training" "$log")
b=$(train after-restart 2)
wait_done 60 "$b" && completed "$b" &&
	ok "after a restart, jobs run ($(sacct -n -X -P -o NodeList -j "$b" | tail -1)); n2 still lent: $(stat_of loaned_nodes)" ||
	ko "after restart: job $b $(sacct -n -X -P -o State,NodeList -j "$b" | tail -1); $(tail -3 "$dir/restart.log")"
[ "$(grep -c "n2 lent to training" "$log")" = "$loans_before" ] && [ "$(stat_of loaned_nodes)" = 1 ] &&
	ok "the loan was kept across the restart (not lent anew)" || ko "loans after restart: $(stat_of loaned_nodes)"

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all loaning checks passed" || echo "$fails loaning check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
