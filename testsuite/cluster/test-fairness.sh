#!/usr/bin/env bash
# Teams sharing a real slurmctld (dlsched-cluster, dlsched mode, profiling on), two nodes of 4 GPUs,
# FairnessPolicy=quota over slurm-backfill: accounts teama and teamb with equal shares (sacctmgr
# Fairshare=1; root's own user association takes Fairshare=parent, so each team's normalised share
# is 1/2: 4 GPUs guaranteed of the 8):
#  - teama fills the cluster by borrowing (a bert job on n1, a cifar10 job on n2); another teama job
#    arriving waits with the reason that its account is over its quota;
#  - teamb submits a 4-GPU job: no teama job ends within QuotaReclaimTimeout= (15 s), so teama's
#    cheapest job to stop (cifar10: a 90 MB checkpoint, bert's is 1.3 GB) is checkpointed and
#    requeued for it, and not the other; teamb's job waits with that reason and starts within the
#    timeout;
#  - the reclaimed job resumes and completes without repeating or skipping an epoch;
#  - the quota in the reasons is the teams' sshare RawShares, normalised, of the 8 GPUs (sshare's
#    NormShares and sprio are priority/multifactor's: empty and refused under full mode's
#    priority/basic); the stats file counts the borrowed GPU time and the reclaim, and the quota
#    reasons as wait_reasons, not as admission_verdicts.
# On a plugin that does not read accounts (before issue 25) teamb's job waits for teama's jobs to end:
# the reclaim, the reasons and the stats checks fail.
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, epochs_of, ...
profiled_cluster_test fairness

profiled_cluster_up --nodes 2 --gpus 4
# The teams; root's user association under root passes its share to root (else it takes a third).
sacctmgr -i add account teama,teamb Fairshare=1 >/dev/null &&
	sacctmgr -i add user root Account=teama,teamb >/dev/null &&
	sacctmgr -i modify user root where account=root set Fairshare=parent >/dev/null ||
	ko "sacctmgr could not make the accounts"
mkdir -p "$dir/views"  # each cycle's view and decisions, to replay a failure
dlsched_conf Policy=slurm-backfill FairnessPolicy=quota QuotaReclaimTimeout=15 SchedInterval=1 PreemptGrace=30 \
	CheckpointAt=iteration "DumpViews=$dir/views"
grep -q "sched/dlsched: loaded .*fairness=quota" "$log" && ok "sched/dlsched runs FairnessPolicy=quota" ||
	ko "no fairness=quota in $(grep 'sched/dlsched: loaded' "$log" | tail -1)"
wait_for 20 sh -c "sshare -n -P -A teama,teamb -o Account 2>/dev/null | grep -q teamb" || ko "sshare does not list the teams"
mkdir -p "$dir/out" "$dir/ck"
head -c 4000000 /dev/urandom >"$dir/data"
# An emulated job of ACCOUNT: MODEL on 4 GPUs, EPOCHS epochs of about EPOCH_S s (on NODE, if given).
train() {  # train NAME ACCOUNT MODEL EPOCHS EPOCH_S [NODE]
	local name="$1" acct="$2" model="$3" n="$4" es="$5" t1
	mkdir -p "$dir/ck/$name"
	t1=$(awk -v e="$es" 'BEGIN { print e * 3.5 }')
	sbatch --parsable --requeue -A "$acct" -J "$name" -o "$dir/out/$name.out" --open-mode=append \
		--gres=gpu:4 ${6:+-w $6} --time=20 --dl-model="$model" --dl-epochs="$n" --comment "epoch_time_1gpu=$t1" \
		--wrap "exec $emu --model $model --epochs $n --epoch-time-1gpu $t1 --noise 0 --storage-mbps 100 \
			--checkpoint-dir $dir/ck/$name --data $dir/data --profiles $top/contribs/profiles"
}
# squeue's reason: dlsched's, set every cycle (1 s); Slurm's main scheduler may put its own
# (Resources) in between, so the checks wait for it a few cycles.
reason_of() { squeue -h -j "$1" -o %r 2>/dev/null; }
reason_has() { reason_of "$1" | grep -q "$2"; }

# ---- teama borrows the whole cluster ----
a1=$(train a-bert teama bert 90 2 n1)
a2=$(train a-cifar teama cifar10 30 2 n2)
wait_for 30 is_state "$a1" RUNNING && wait_for 30 is_state "$a2" RUNNING && ok "teama runs on all 8 GPUs" ||
	ko "teama's jobs did not start: $(state_of "$a1") $(state_of "$a2")"
sleep 5  # an epoch or two of each in the profile DB
a3=$(sbatch --parsable --requeue -A teama -J a-more -o /dev/null --gres=gpu:4 --time=5 --wrap 'sleep 5')
wait_for 15 reason_has "$a3" "over account 'teama'.s quota" &&
	ok "teama's third job waits: $(reason_of "$a3")" || ko "teama's third job $a3: $(state_of "$a3") '$(reason_of "$a3")'"

# ---- teamb comes: its quota back within QuotaReclaimTimeout= ----
t0=$(date +%s)
b=$(sbatch --parsable --requeue -A teamb -J b-job -o /dev/null --gres=gpu:4 --time=5 --wrap 'sleep 15')
# Its reason while its GPUs are reclaimed (checkpoint at the next iteration, then the requeue).
wait_for 10 reason_has "$b" "quota reclaim for account 'teamb': borrowed GPUs of job(s) $a2 are being checkpointed" &&
	ok "teamb's job waits for its quota: $(reason_of "$b")" || ko "teamb's job $b: $(state_of "$b") '$(reason_of "$b")'"
wait_for 60 is_state "$b" RUNNING || ko "teamb's job did not start in 60 s: '$(reason_of "$b")'"
waited=$(( $(date -d "$(sacct -n -X -P -o Start -j "$b" | tail -1)" +%s) - t0 ))
# No teama job ends within QuotaReclaimTimeout=15: the reclaim at once, then the checkpoint at the
# next iteration and the requeue: a few seconds, within the timeout.
[ "$waited" -le 15 ] && ok "teamb's job started $waited s after its submission (QuotaReclaimTimeout=15)" ||
	ko "teamb's job started after $waited s"
grep -qF "asked JobId=$a2 to checkpoint (quota reclaimed for account 'teamb' (job $b);" "$log" &&
	ok "teama's cifar10 job (cheapest to stop) was checkpointed for teamb" ||
	ko "no reclaim of $a2: $(grep -E 'asked JobId|reclaimed' "$log" | tail -3)"
grep -q "asked JobId=$a1 to checkpoint" "$log" && ko "teama's bert job was reclaimed too" ||
	ok "teama's bert job (costlier to stop; teama keeps its quota) was left alone"
grep -q "requeued JobId=$a2 .*after its checkpoint" "$log" && ok "requeued after its checkpoint report" ||
	ko "requeue of $a2: $(grep "requeued JobId=$a2" "$log" | head -1)"
grep -q "signal 10: checkpoint at epoch" "$dir/out/a-cifar.out" && ok "the reclaimed job got SIGUSR1 and saved" ||
	ko "its output: $(tail -3 "$dir/out/a-cifar.out")"
is_state "$a3" PENDING && wait_for 10 reason_has "$a3" "over account 'teama'.s quota" &&
	ok "teama's third job still waits behind teamb" ||
	ko "teama's third job $a3: $(state_of "$a3") '$(reason_of "$a3")'"

# ---- sshare and the reasons agree: each team's quota is its share of the 8 GPUs ----
# Under priority/basic (full mode) sshare lists the associations' RawShares; its NormShares are
# priority/multifactor's and stay empty, and sprio refuses (doc/admin-guide.md says so).
shares_of() { sshare -n -P -A "$1" -o Account,User,RawShares,NormShares 2>/dev/null | awk -F'|' -v a="$1" '$1 ~ a && $2 == "" { print $3 "|" $4 }'; }
sa=$(shares_of teama) sb=$(shares_of teamb)
quota_in_reason() { qa=$(reason_of "$1" | sed -n 's/.*; quota \([0-9.]*\)).*/\1/p'); [ -n "$qa" ]; }
wait_for 10 quota_in_reason "$a3"
[ "$sa" = "1|" ] && [ "$sb" = "1|" ] && [ "$qa" = 4 ] &&
	ok "sshare: RawShares teama 1, teamb 1 (NormShares empty under priority/basic); teama's quota in its reason: $qa of 8 GPUs" ||
	ko "sshare RawShares|NormShares '$sa' '$sb', quota in the reason '$qa' ($(sshare -n -P -A teama,teamb 2>&1 | tr '\n' ' '))"
sprio 2>&1 | grep -q "not running a supported priority plugin" && ok "sprio says priority/basic is not its plugin" ||
	ko "sprio: $(sprio 2>&1 | head -2)"

# ---- the reclaimed job resumes without losing an epoch ----
final_state() { [ "$(sacct -n -X -P -o State -j "$1" | tail -n1)" = COMPLETED ] && ! squeue -h -j "$1" 2>/dev/null | grep -q .; }
wait_for 150 final_state "$a2" || ko "the reclaimed job did not finish in 150 s"
completed "$a2" && ok "the reclaimed job completed" || ko "job $a2: $(sacct -n -X -P --duplicates -o State -j "$a2" | tr '\n' ' ')"
epochs_of "$a2" | is_sequence 30 && ok "it resumed without repeating or skipping an epoch (1..30 once each)" ||
	ko "epochs of $a2: $(epochs_of "$a2" | tr '\n' ' ')"
scancel "$a1" "$a3" "$b"
wait_done 30 "$a1" "$a3" "$b"

# ---- the stats file: borrowed GPU time and the reclaim ----
sleep 2
stat_of() { sed -n "s/^$1=//p" "$st"; }
[ "$(stat_of quota_reclaims)" = 1 ] && [ "$(stat_of quota_reclaimed_gpus)" = 4 ] &&
	awk -v s="$(stat_of borrowed_gpu_s)" 'BEGIN { exit !(s >= 4 * 15) }' &&
	ok "stats: $(grep -E '^(borrowed|quota_)' "$st" | tr '\n' ' ')" ||
	ko "stats: $(grep -E '^(borrowed|quota_)' "$st" | tr '\n' ' ')"
grep -q "^fallback_cycles=0$" "$st" && ok "no cycle fell back" || ko "fallbacks: $(grep fallback "$st")"
# The quota reasons are no admission verdicts (no job here has a deadline): counted apart.
[ "$(stat_of admission_verdicts)" = 0 ] && [ "$(stat_of wait_reasons)" -ge 2 ] 2>/dev/null &&
	ok "stats: quota reasons are wait_reasons=$(stat_of wait_reasons), admission_verdicts=0" ||
	ko "stats: admission_verdicts=$(stat_of admission_verdicts) wait_reasons=$(stat_of wait_reasons)"

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all fairness checks passed" || echo "$fails fairness check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
