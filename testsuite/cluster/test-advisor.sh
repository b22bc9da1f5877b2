#!/usr/bin/env bash
# The advisor mode (sched/backfill with site_factor/dlsched and preempt/dlsched sharing one advisor
# thread) across reconfigures and stale decisions:
#  - a reconfigure that changes PreemptType unloads preempt/dlsched under slurmctld's write locks
#    (up to Slurm 23.02; from 23.11 a reconfigure starts a new slurmctld, which loads the new type):
#    slurmctld neither hangs nor crashes, and site_factor/dlsched's advisor goes on (the thread
#    kept a pointer into the unloaded plugin, and stopping it joined a thread that may wait for
#    the locks the reconfigure holds); loading preempt/dlsched again shares the advisor again;
#  - a victim chosen by a cycle is not preempted once it can no longer be requeued (scontrol
#    update Requeue=0), even when no cycle has decided since (a dlsched.conf that fails to load
#    cleared nothing before: Slurm then SIGKILLed the job as a victim).
# Skips (77) without root, Slurm/munge/MariaDB, or the plugins (configure --with-slurm-source).
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
build="$(pwd)"
tool="$top/contribs/cluster/dlsched-cluster"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
	{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
[ -f "$build/plugins/lib/preempt_dlsched.so" ] ||
	{ echo "SKIP: plugins not built (configure --with-slurm-source; scripts/run-tests does it)"; exit 77; }
. "$top/testsuite/cluster/lib.sh"  # wait_for, wait_done, state_of, is_state, ok, ko

dir=$(mktemp -d /tmp/dlsched-advisor-test.XXXXXX)
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
fails=0
trap '"$tool" down --dir "$dir/a" >/dev/null 2>&1' EXIT
meta() { echo "model=imagenet epochs=1 epoch_time_1gpu=$1"; }
if ! "$tool" up --nodes 1 --gpus 8 --dir "$dir/a" --port-base "$port" --mode advisor --no-profiling \
	--plugin-dir "$build/plugins/lib" --policy srtf --profiles "$top/contribs/profiles" >"$dir/up.log" 2>&1; then
	cat "$dir/up.log"
	echo "Bail out! cluster did not come up"
	exit 1
fi
export SLURM_CONF="$dir/a/etc/slurm.conf"
log="$dir/a/log/slurmctld.log"
# The slurmctld that answers now (from Slurm 23.11 each reconfigure starts a new one: a new pid).
alive() { kill -0 "$(cat "$dir/a/pids/slurmctld.pid")" 2>/dev/null && timeout 10 scontrol ping 2>/dev/null | grep -q UP; }
lines=0
since() { tail -n +"$((lines + 1))" "$log"; } # the slurmctld log since the last preempt_type
preempt_type() {  # preempt_type TYPE MODE: rewrite slurm.conf's PreemptType/PreemptMode, reconfigure
	pid=$(cat "$dir/a/pids/slurmctld.pid")
	lines=$(wc -l <"$log")
	sed -i "s|^PreemptType=.*|PreemptType=$1|; s|^PreemptMode=.*|PreemptMode=$2|" "$SLURM_CONF"
	timeout 20 scontrol reconfigure >/dev/null 2>&1
	sleep 4
	wait_for 20 alive
}
restarted() { [ "$(cat "$dir/a/pids/slurmctld.pid")" != "$pid" ]; } # by the last preempt_type
first=$(grep -oE "(site_factor|preempt)/dlsched: loaded" "$log" | head -n1 | cut -d: -f1)
echo "# the advisor was started by ${first:-?}"

# ---- PreemptType changed by a reconfigure: preempt/dlsched unloaded under the write locks ----
# (Slurm 23.11 on: the new slurmctld loads preempt/none and site_factor/dlsched starts the advisor.)
preempt_type preempt/none OFF
if restarted; then
	alive && ! scontrol show config | grep -qE "^PreemptType += preempt/dlsched" && since | grep -q "site_factor/dlsched: loaded" &&
		! since | grep -q "preempt/dlsched: loaded" &&
		ok "PreemptType changed away from preempt/dlsched: a new slurmctld (pid $pid -> $(cat "$dir/a/pids/slurmctld.pid")) with site_factor/dlsched's advisor alone" ||
		ko "slurmctld after PreemptType changed (a new process): $(since | grep -E 'PreemptType|dlsched|fatal|error' | tail -n3)"
else
	alive && grep -q "Changing PreemptType from preempt/dlsched to preempt/none" "$log" &&
		! grep -q "cannot pin" "$log" &&
		ok "PreemptType changed away from preempt/dlsched: slurmctld up (advisor library pinned)" ||
		ko "slurmctld down or hung after PreemptType changed: $(grep -E 'PreemptType|dlsched|fatal|error' "$log" | tail -n3)"
fi
timeout 20 scontrol reconfigure >/dev/null 2>&1
sleep 3
wait_for 20 alive && [ "$(grep -c "site_factor/dlsched: loaded" "$log")" -ge 1 ] &&
	ok "site_factor/dlsched's advisor goes on under its own name after another reconfigure" ||
	ko "advisor after preempt/dlsched was unloaded: $(grep -E '(site_factor|preempt)/dlsched' "$log" | tail -n3)"
# Loaded again, the two share one advisor: in the same process preempt/dlsched joins site_factor's;
# in a new one whichever loads first starts it.
preempt_type preempt/dlsched REQUEUE
alive && since | grep -qE "(preempt|site_factor)/dlsched: shares the advisor (site_factor|preempt)/dlsched started" &&
	ok "preempt/dlsched loaded again shares the advisor ($(since | grep -oE '[a-z_]+/dlsched: shares the advisor [a-z_]+/dlsched' | tail -n1))" ||
	ko "preempt/dlsched reloaded: $(grep -E '(site_factor|preempt)/dlsched' "$log" | tail -n3)"

# ---- a victim that can no longer be requeued is not preempted ----
# b runs on all 8 GPUs; s, much shorter, waits behind it: srtf makes b the victim of s. The
# partition is down meanwhile, so that Slurm starts nothing until the table is stale. First as it
# should go: b requeued for s.
b=$(sbatch --parsable -o /dev/null --requeue --gres=gpu:8 --time=30 --comment "$(meta 2400)" --wrap 'sleep 300')
wait_for 20 is_state "$b" RUNNING || ko "job $b did not start: $(state_of "$b")"
scontrol update PartitionName=train State=DOWN
s=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=3 --comment "$(meta 160)" --wrap 'true')
sleep 4
scontrol update PartitionName=train State=UP
wait_for 20 grep -q "preempted JobId=$b has been requeued" "$log" &&
	ok "srtf's victim $b is requeued for $s" || ko "job $b not preempted: $(grep -E "JobId=($b|$s)" "$log" | tail -n3)"
scancel "$b" "$s"
wait_done 20 "$b" "$s"

b=$(sbatch --parsable -o /dev/null --requeue --gres=gpu:8 --time=30 --comment "$(meta 2400)" --wrap 'sleep 300')
wait_for 20 is_state "$b" RUNNING || ko "job $b did not start: $(state_of "$b")"
scontrol update PartitionName=train State=DOWN
s=$(sbatch --parsable -o /dev/null --gres=gpu:8 --time=3 --comment "$(meta 160)" --wrap 'true')
sleep 4  # cycles every second: b is the victim, s the job it makes room for
scontrol update JobId="$b" Requeue=0
# From now on no cycle decides: dlsched.conf does not load (the advisor's table stays as it was).
conf="$dir/a/etc/dlsched.conf"
cp "$conf" "$dir/dlsched.conf.good"
echo "NoSuchKey=1" >>"$conf"
timeout 20 scontrol reconfigure >/dev/null 2>&1
sleep 3
grep -q "NoSuchKey" "$log" || ko "the broken dlsched.conf was not reported"
scontrol update PartitionName=train State=UP
sleep 8
[ "$(state_of "$b")" = RUNNING ] && ! grep -qE "preempted JobId=$b |JobId=$b.*(killed|requeued)" "$log" &&
	ok "a victim with Requeue=0 keeps running (job $b $(state_of "$b"))" ||
	ko "job $b: $(state_of "$b"); $(grep -E "JobId=$b" "$log" | tail -n3)"
scancel "$b" "$s"
cp "$dir/dlsched.conf.good" "$conf"

"$tool" down --dir "$dir/a" >/dev/null
[ $fails -eq 0 ] && echo "all advisor checks passed" || echo "$fails advisor check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
