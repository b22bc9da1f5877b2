#!/usr/bin/env bash
# Fair-share in full mode: sched/dlsched under PriorityType=priority/multifactor with
# PriorityFlags=INCR_ONLY (dlsched-cluster --priority multifactor: usage billed in GPU seconds),
# FairnessPolicy=fairshare over slurm-backfill, one node of 4 GPUs, accounts teama and teamb with
# equal shares (sacctmgr Fairshare=1; root's own user association takes Fairshare=parent):
#  - sched/dlsched says it keeps its order under multifactor (INCR_ONLY);
#  - teama's first job holds all 4 GPUs past two PriorityCalcPeriods (1 min each): multifactor records its
#    usage: sshare's RawUsage grows for teama, stays 0 for teamb, NormShares are 0.5 each, and sprio
#    lists the waiting jobs (under priority/basic it refuses, test-fairness.sh);
#  - meanwhile teama's second job, then teamb's, wait: once teama's usage counts, dlsched puts teamb's
#    job first (a higher fair-share factor), with priorities above multifactor's range, and that
#    order still stands after multifactor's next recalculation (INCR_ONLY: multifactor never lowers
#    it); multifactor alone (no PriorityWeight* set: equal priorities) would run the older job first;
#  - when teama's first job ends, teamb's job starts and teama's second still waits.
# Needs dlsched-cluster --priority (new with this test). Fails on a plugin that does not check
# PriorityType (no log line) or that ignores usage (teama's second job first).
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, slurm_order, ...
profiled_cluster_test fairshare

profiled_cluster_up --nodes 1 --gpus 4 --priority multifactor
grep -q "^PriorityType=priority/multifactor" "$SLURM_CONF" && grep -q "^PriorityFlags=INCR_ONLY" "$SLURM_CONF" &&
	ok "full mode under priority/multifactor with INCR_ONLY" || ko "slurm.conf: $(grep ^Priority "$SLURM_CONF" | tr '\n' ' ')"
sacctmgr -i add account teama,teamb Fairshare=1 >/dev/null &&
	sacctmgr -i add user root Account=teama,teamb >/dev/null &&
	sacctmgr -i modify user root where account=root set Fairshare=parent >/dev/null ||
	ko "sacctmgr could not make the accounts"
dlsched_conf Policy=slurm-backfill FairnessPolicy=fairshare SchedInterval=1
grep -q "sched/dlsched: loaded .*fairness=fairshare" "$log" && ok "sched/dlsched runs FairnessPolicy=fairshare" ||
	ko "no fairness=fairshare in $(grep 'sched/dlsched: loaded' "$log" | tail -1)"
grep -q "sched/dlsched: PriorityType=priority/multifactor with INCR_ONLY: dlsched's order stands" "$log" &&
	ok "sched/dlsched: $(grep -o 'PriorityType=priority/multifactor with INCR_ONLY.*' "$log" | tail -1)" ||
	ko "no word on PriorityType in the log: $(grep -i 'priority' "$log" | tail -2)"
wait_for 20 sh -c "sshare -n -P -A teama,teamb -o Account 2>/dev/null | grep -q teamb" || ko "sshare does not list the teams"

# ---- teama holds the node past a recalculation; then its second job and teamb's wait ----
a1=$(sbatch --parsable -A teama -J a1 -o /dev/null --gres=gpu:4 --time=5 --wrap 'sleep 130')
wait_for 20 is_state "$a1" RUNNING && ok "teama's first job runs on the 4 GPUs" || ko "a1: $(state_of "$a1")"
a2=$(sbatch --parsable -A teama -J a2 -o /dev/null --gres=gpu:4 --time=5 --wrap 'sleep 5')
sleep 2
b=$(sbatch --parsable -A teamb -J b -o /dev/null --gres=gpu:4 --time=5 --wrap 'sleep 5')
ids=("$a2" "$b")
joblist="$a2,$b"
# [account, user, raw shares, norm shares, raw usage] of the account's own row.
share_row() { sshare -n -P -A "$1" -o Account,User,RawShares,NormShares,RawUsage 2>/dev/null | awk -F'|' -v a="$1" '$1 ~ a && $2 == ""'; }
usage_of() { share_row "$1" | cut -d'|' -f5; }
has_usage() { [ "${1:-0}" -gt 0 ] 2>/dev/null; }
wait_for 75 sh -c "[ \"\$(sshare -n -P -A teama -o Account,User,RawUsage 2>/dev/null | awk -F'|' '\$1 ~ /teama/ && \$2 == \"\" { print \$3 }')\" -gt 0 ]" ||
	ko "teama's usage stayed 0 for 75 s: $(share_row teama)"
ua=$(usage_of teama) ub=$(usage_of teamb)
has_usage "$ua" && [ "$ub" = 0 ] && ok "sshare RawUsage: teama $ua GPU-s, teamb $ub" ||
	ko "sshare RawUsage teama '$ua' teamb '$ub'"
na=$(share_row teama | cut -d'|' -f4) nb=$(share_row teamb | cut -d'|' -f4)
awk -v a="$na" -v b="$nb" 'BEGIN { exit !(a > 0.49 && a < 0.51 && b > 0.49 && b < 0.51) }' &&
	ok "sshare NormShares: teama $na, teamb $nb" || ko "sshare NormShares '$na' '$nb'"
order=$(wait_order 10 "2 1")
[ "$order" = "2 1" ] && ok "dlsched puts teamb's job ahead of teama's older one (fair-share): $(squeue -h -t PD -o '%i %a %Q' | tr '\n' ' ')" ||
	ko "order of (a2, b) '$order': $(squeue -h -t PD -o '%i %a %Q' | tr '\n' ' ')"
sprio -h -j "$b" 2>/dev/null | grep -q "$b" && ok "sprio lists teamb's job: $(sprio -h -j "$b" | head -1)" ||
	ko "sprio: $(sprio -j "$b" 2>&1 | head -2)"

# ---- the order survives multifactor's recalculation, and teamb's job goes first ----
is_state "$a1" RUNNING || ko "a1 ended before the order could be checked ($(state_of "$a1"))"
before=$(usage_of teama)
wait_for 70 sh -c "[ \"\$(sshare -n -P -A teama -o Account,User,RawUsage 2>/dev/null | awk -F'|' '\$1 ~ /teama/ && \$2 == \"\" { print \$3 }')\" != \"$before\" ] || ! squeue -h -j $a1 | grep -q ." || true
order=$(slurm_order)
[ "$order" = "2 1" ] || ! is_state "$b" PENDING &&
	ok "after multifactor's recalculation the order stands ($(squeue -h -t PD -o '%i %Q' | tr '\n' ' '))" ||
	ko "after multifactor's recalculation: order '$order' ($(squeue -h -t PD -o '%i %Q' | tr '\n' ' '))"
started() { case "$(sacct -n -X -P -o Start -j "$1" | tail -1)" in "" | Unknown | None) return 1 ;; esac; }
wait_for 90 started "$b" || ko "teamb's job did not start: $(state_of "$b") $(squeue -h -j "$b" -o %r)"
sa2=$(sacct -n -X -P -o Start -j "$a2" | tail -1) sb=$(sacct -n -X -P -o Start -j "$b" | tail -1)
if ! started "$a2" || [ "$sa2" \> "$sb" ]; then
	ok "teamb's job started first when the GPUs freed ($sb; teama's second: $sa2)"
else
	ko "teama's second job started first: a2 $sa2, b $sb"
fi
grep -q "^fallback_cycles=0$" "$st" && ok "no cycle fell back" || ko "fallbacks: $(grep fallback "$st")"
scancel "$a1" "$a2" "$b" 2>/dev/null
wait_done 30 "$a1" "$a2" "$b"

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all fair-share checks passed" || echo "$fails fair-share check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
