#!/usr/bin/env bash
# dlsched-replay does not count a job done while sched/dlsched still holds it in its stopping table
# (StateSaveLocation/dlsched-stopping.state): a job that exits on dlsched's checkpoint request shows
# a final state (FAILED, exit 143) until sched/dlsched requeues it, when its checkpoint report
# arrives or at the latest after PreemptGrace=. Seen at the end of scripts/demo: the replay counted
# such a job done after kEndGrace (5 s), finished, and the demo took the cluster down with the job
# FAILED in sacct.
#
# No cluster here (that is test-stops and scripts/demo): squeue, sacct, sbatch and scontrol are
# stand-ins on PATH that play one job's states from a timeline the test writes; the journal lines
# are the ones plugins/sched/dlsched/stopping.c writes. Timeline: the job runs, exits on the
# request and shows FAILED for 12 s (more than kEndGrace + a poll) while the journal lists it, then
# is requeued (del), runs again and completes. The replay must end after the completion.
# A second run checks the bound: a job left in the table past its deadline (+ 30 s) stops holding
# the replay back.
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
replay="${DLSCHED_REPLAY:-$(pwd)/contribs/replay/dlsched-replay}"
[ -x "$replay" ] || { echo "Bail out! $replay not built (make)"; exit 99; }
tmp=$(mktemp -d /tmp/dlsched-replay-stops.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
ko() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }

mkdir -p "$tmp/bin" "$tmp/state" "$tmp/out"
# The job's current state, as squeue shows it ("RUNNING", "FAILED", ...): written by the timeline.
echo PENDING >"$tmp/job.state"
cat >"$tmp/bin/squeue" <<SH
#!/bin/sh
printf '4242 dl-1 %s|None\n' "\$(cat "$tmp/job.state")"
SH
cat >"$tmp/bin/sacct" <<SH
#!/bin/sh
printf 'dl-1|%s\n' "\$(cat "$tmp/job.state")"
SH
cat >"$tmp/bin/sbatch" <<SH
#!/bin/sh
echo 4242
SH
cat >"$tmp/bin/scontrol" <<SH
#!/bin/sh
[ "\$1 \$2" = "show config" ] && printf 'StateSaveLocation       = %s\n' "$tmp/state"
exit 0
SH
chmod +x "$tmp/bin/"*
printf 'submit_s,gpus,min_gpus,max_gpus,model,epochs,epoch_s\n0,1,1,1,cifar10,1,60\n' >"$tmp/one.csv"
journal="$tmp/state/dlsched-stopping.state"

# timeline GRACE: plays the job; the request's deadline is GRACE s after it; REQUEUE=0 leaves the
# job in the table (a sched/dlsched that stopped running).
timeline() {
	local grace=$1 requeue=$2 now
	sleep 2
	echo RUNNING >"$tmp/job.state"
	sleep 2
	now=$(date +%s)
	echo "v2 4242 $now.000 $((now + grace)).000 1 1 1 5 10 0 $((now - 2)) 0 preempted by ordering" >>"$journal"
	sleep 1
	echo FAILED >"$tmp/job.state"
	[ "$requeue" -eq 1 ] || return 0
	sleep 12
	echo "del 4242" >>"$journal"
	echo PENDING >"$tmp/job.state"
	sleep 2
	echo RUNNING >"$tmp/job.state"
	sleep 3
	date +%s.%N >"$tmp/completed"
	echo COMPLETED >"$tmp/job.state"
}

run_replay() {
	PATH="$tmp/bin:$PATH" SLURM_CONF=/dev/null timeout 120 "$replay" --workload "$tmp/one.csv" \
		--speedup 1000 --out "$tmp/out" --emu-train /bin/true >"$tmp/replay.out" 2>&1
}

# 1. Ended inside a stop: done only after its requeue and real end.
: >"$journal"
rm -f "$tmp/completed"
timeline 60 1 &
tl=$!
t0=$(date +%s)
run_replay
rc=$?
ended=$(date +%s.%N)
wait "$tl"
if [ "$rc" -ne 0 ]; then
	ko "replay exit $rc: $(tail -3 "$tmp/replay.out")"
elif [ ! -f "$tmp/completed" ] || awk -v e="$ended" -v c="$(cat "$tmp/completed")" 'BEGIN { exit !(e < c) }'; then
	ko "the replay ended $(awk -v e="$ended" -v t="$t0" 'BEGIN { printf "%.0f", e - t }') s in, before the job's requeue and completion (it counted the FAILED job in the stopping table done)"
else
	ok "a job ended inside a stop is done only after its requeue and completion"
fi
grep -q "job 4242 was asked to checkpoint by sched/dlsched" "$tmp/replay.out" &&
	ok "the replay says why it waits" || ko "no word of the stop: $(tail -3 "$tmp/replay.out")"

# 2. Left in the table (sched/dlsched gone): waits until the deadline + 30 s, not for ever.
: >"$journal"
timeline 3 0 &
tl=$!
t0=$(date +%s)
run_replay
rc=$?
took=$(($(date +%s) - t0))
wait "$tl"
if [ "$rc" -eq 0 ] && [ "$took" -ge 35 ] && [ "$took" -le 60 ] &&
	grep -q "still in sched/dlsched's stopping table" "$tmp/replay.out"; then
	ok "a stale stop holds the replay back only until its deadline + 30 s ($took s)"
else
	ko "stale stop: exit $rc after $took s: $(tail -3 "$tmp/replay.out")"
fi

echo "1..$n"
exit $((fails > 0))
