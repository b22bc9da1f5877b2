#!/usr/bin/env bash
# Safe actuation by sched/dlsched inside a real slurmctld (dlsched-cluster, dlsched mode, Policy=srtf,
# SchedInterval=1; 2 training nodes and 1 inference node of 8 GPUs; MaxNodeCount=8):
#  nodes     node table slots without a node (dynamic nodes) do not make cycles fall back;
#  eligible  a job Slurm would not start (down partition, pending or never-satisfiable dependency)
#            is not started by dlsched, while jobs behind it are;
#  requeue   a job that cannot be requeued (--no-requeue, an salloc allocation) is never signalled
#            or requeued, and a short job waits; an otherwise identical requeueable job is preempted;
#  hints     a tiny or overflowing runtime claim with a long time limit does not jump the queue or
#            preempt; a job without --time is bounded by its partition's MaxTime;
#  admin     an administrator's priority stays; --nice goes behind; a held job waits for release,
#            then ranks strictly above the --nice job, also while GPUs are freed for it;
#            a running job an admin put behind is not preempted for that;
#  shape     a job's own node count (sbatch -N2) is kept where the plan would pack it on one node.
# Partition infer's node n3 is kept busy where srtf plans across running jobs: the core's allocation
# counts free GPUs of another partition as room, and then preempts or starts nothing.
# DLSCHED_SAFETY_SECTIONS="nodes hints" runs only those sections (each cleans up after itself).
# Jobs claim runtimes with "epochs=1 epoch_time_1gpu=8xS" (no model: linear scaling, S seconds on 8
# GPUs) and give --time limits that keep claims within [limit / HintTrustFactor, limit].
# Skips (77) without root, Slurm/munge/MariaDB, or plugins (configure --with-slurm-source).
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
build="$(pwd)"
tool="$top/contribs/cluster/dlsched-cluster"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
	{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
[ -f "$build/plugins/lib/sched_dlsched.so" ] ||
	{ echo "SKIP: plugins not built (configure --with-slurm-source; scripts/run-tests does it)"; exit 77; }

dir=$(mktemp -d /tmp/dlsched-safety-test.XXXXXX)
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
sections="${DLSCHED_SAFETY_SECTIONS:-nodes eligible requeue hints admin shape}"
fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() { "$tool" down --dir "$dir/c" >/dev/null 2>&1; }
trap cleanup EXIT

if ! "$tool" up --nodes 2 --inference-nodes 1 --gpus 8 --max-node-count 8 --dir "$dir/c" --port-base "$port" \
	--mode dlsched --plugin-dir "$build/plugins/lib" --policy srtf --sched-interval 1 \
	--profiles "$top/contribs/profiles" --no-profiling >"$dir/up.log" 2>&1; then
	cat "$dir/up.log"
	echo "Bail out! cluster did not come up"
	exit 1
fi
export SLURM_CONF="$dir/c/etc/slurm.conf"
log="$dir/c/log/slurmctld.log"
stats="$dir/c/state/dlsched-sched.stats"
. "$top/testsuite/cluster/lib.sh"  # wait_done
# A victim that does not report a checkpoint (no profiling here) is requeued when its grace runs
# out: 3 s, so that the preemptions below take seconds, not PreemptGrace's default 10 minutes.
echo "PreemptGrace=3" >>"$dir/c/etc/dlsched.conf"
scontrol reconfigure >/dev/null
sleep 2

claim() { echo "epochs=1 epoch_time_1gpu=$(($1 * 8))"; }  # a claim of $1 s on 8 GPUs
sub() { sbatch --parsable -o /dev/null "$@"; }
# A whole node for a while; its claim (6 s) has run out, so srtf never preempts it for the others.
blocker() { sub --gres=gpu:8 -w "$1" "${@:2}" --time=1 --comment "$(claim 6)" --wrap 'sleep 60'; }
st() { squeue -h -j "$1" -o %T 2>/dev/null; }
reason() { squeue -h -j "$1" -o %r 2>/dev/null; }
prio() { squeue -h -j "$1" -o %Q 2>/dev/null; }
wait_state() {  # wait_state SECONDS JOBID STATE
	local t=0
	while [ $t -lt $(($1 * 4)) ]; do
		[ "$(st "$2")" = "$3" ] && return 0
		sleep 0.25
		t=$((t + 1))
	done
	return 1
}
by_dlsched() { grep -q "sched/dlsched: started JobId=$1 on" "$log"; }
# The log line number of a job's first start (sched/dlsched's or Slurm's own), empty if none.
first_start() { grep -n -m1 -E "(sched/dlsched: started JobId=$1 on|sched: Allocate JobId=$1 )" "$log" | cut -d: -f1; }
stat_of() { sed -n "s/^$1=//p" "$stats"; }
records() { sacct -n -X -P --duplicates -o State -j "$1" | paste -sd' '; }
has() { case " $sections " in *" $1 "*) return 0 ;; esac; return 1; }
cycles_pass() {  # cycles_pass N: N more dlsched cycles have run
	local want=$(($(stat_of cycles) + $1)) t=0
	while [ "$(stat_of cycles)" -lt "$want" ] && [ $t -lt $(($1 * 20)) ]; do sleep 0.25; t=$((t + 1)); done
}

grep -q "sched/dlsched: loaded .*preset=srtf" "$log" && ok "sched/dlsched loaded dlsched.conf" ||
	ko "sched/dlsched did not log its configuration"

# ---- nodes: slots of Slurm's node table without a node (MaxNodeCount=8, 3 nodes configured; a
# dynamic node created and deleted) stay in the view as placeholders: cycles keep deciding ----
if has nodes; then
	created=no
	if scontrol create NodeName=d1 CPUs=1 RealMemory=1000 State=FUTURE >/dev/null 2>&1 &&
		scontrol create NodeName=d2 CPUs=1 RealMemory=1000 State=FUTURE >/dev/null 2>&1 &&
		scontrol delete NodeName=d1 >/dev/null 2>&1; then
		created=yes
	fi
	# A job only sched/dlsched starts: Slurm's main scheduler stops at the two-node job ahead of
	# it (higher priority, cannot start while n1 is busy); dlsched's plan skips that one. (n3 busy
	# too: the core's allocation counts partition infer's free GPUs as room for the two-node job.)
	bi=$(blocker n3 -p infer)
	b=$(blocker n1)
	big=$(sub -N 2 --gres=gpu:8 --time=1 --comment "$(claim 10)" --wrap 'sleep 1')
	j=$(sub --gres=gpu:8 --time=1 --comment "$(claim 20)" --wrap 'sleep 1')
	wait_state 10 "$j" RUNNING
	cycles_pass 2
	fb=$(stat_of fallback_cycles)
	[ "$fb" = 0 ] && [ -z "$(stat_of last_error)" ] && ok "empty node slots: no cycle fell back (dynamic node d1 deleted: $created)" ||
		ko "empty node slots: fallback_cycles=$fb, last_error=$(stat_of last_error)"
	by_dlsched "$j" && ok "empty node slots: sched/dlsched started JobId=$j itself" ||
		ko "empty node slots: JobId=$j was not started by sched/dlsched ($(st "$j"))"
	scancel "$b" "$bi" "$big" "$j"
	wait_done 20 "$b" "$bi" "$big" "$j"
	scontrol delete NodeName=d2 >/dev/null 2>&1
fi

# ---- eligible: jobs Slurm would not start (down partition, dependency) take no GPUs from dlsched
# and are not started by it; the jobs behind them are ----
if has eligible; then
	# d waits for n3 (partition infer) with a dlsched priority; then infer goes down and n3 frees.
	bi=$(blocker n3 -p infer)
	d=$(sub -p infer --gres=gpu:8 --time=5 --comment "$(claim 60)" --wrap 'sleep 1')
	cycles_pass 2
	prio_up=$(prio "$d")
	scontrol update PartitionName=infer State=DOWN
	scancel "$bi"
	e=$(sub --gres=gpu:8 --time=10 --comment "$(claim 240)" --wrap 'sleep 30')
	wait_state 10 "$e" RUNNING
	cycles_pass 3
	[ "$(st "$d")" = PENDING ] && ! by_dlsched "$d" && [ "$(st "$e")" = RUNNING ] &&
		ok "down partition: JobId=$d not started ($(reason "$d")); JobId=$e behind it runs" ||
		ko "down partition: JobId=$d $(st "$d") ($(reason "$d")), JobId=$e behind it $(st "$e")"
	# dlsched's priorities are 0xffff0001 (4294901761) and up; Slurm's own are below.
	prio_down=$(prio "$d")
	[ "${prio_up:-0}" -ge 4294901761 ] 2>/dev/null && [ "${prio_down:-0}" -gt 0 ] 2>/dev/null &&
		[ "$prio_down" -lt 4294901761 ] && ok "down partition: JobId=$d back at Slurm's priority ($prio_up -> $prio_down)" ||
		ko "down partition: JobId=$d priority $prio_up -> $prio_down"
	scancel "$e"
	scontrol update PartitionName=infer State=UP
	wait_done 20 "$d" "$e" "$bi" && completed "$d" && ok "partition up again: JobId=$d ran" ||
		ko "partition up again: JobId=$d $(st "$d") $(reason "$d")"

	# n1 busy with x; n2 free. p waits for x to succeed, n for f, which fails (never satisfiable).
	x=$(sub --gres=gpu:8 -w n1 --time=5 --comment "$(claim 20)" --wrap 'sleep 12')
	f=$(sub -c 1 --time=1 --wrap 'sleep 1; exit 1')
	p=$(sub --gres=gpu:8 --time=5 --comment "$(claim 30)" --dependency=afterok:"$x" --wrap 'sleep 1')
	n=$(sub --gres=gpu:8 --time=5 --comment "$(claim 30)" --dependency=afterok:"$f" --wrap 'sleep 1')
	t=0
	while [ "$(st "$n")" = PENDING ] && [ "$(reason "$n")" != DependencyNeverSatisfied ] && [ $t -lt 60 ]; do
		sleep 0.25; t=$((t + 1))
	done
	cycles_pass 3
	q=$(sub --gres=gpu:8 --time=10 --comment "$(claim 240)" --wrap 'sleep 3')
	wait_state 10 "$q" RUNNING && q_ran=yes || q_ran=no
	[ "$(st "$n")" = PENDING ] && ! by_dlsched "$n" &&
		ok "never-satisfiable dependency: JobId=$n not started ($(reason "$n"))" ||
		ko "never-satisfiable dependency: JobId=$n $(st "$n") ($(reason "$n"))"
	[ "$(st "$p")" = PENDING ] && ! by_dlsched "$p" &&
		ok "unmet dependency afterok:$x: JobId=$p not started ($(reason "$p"))" ||
		ko "unmet dependency afterok:$x: JobId=$p $(st "$p") ($(reason "$p"))"
	[ $q_ran = yes ] && ok "JobId=$q behind them started on the free node" ||
		ko "JobId=$q behind them did not start: $(st "$q") ($(reason "$q"))"
	wait_done 30 "$x" "$p" "$q" && completed "$p" && ok "dependency met: JobId=$p ran after JobId=$x" ||
		ko "dependency met: JobId=$p $(st "$p") ($(reason "$p"))"
	scancel "$n"
	wait_done 10 "$n"
fi

# ---- requeue: srtf preempts for a much shorter job only jobs Slurm can requeue ----
if has requeue; then
	mkdir -p "$dir/out"
	# A long job that records the signals it gets (USR1: checkpoint now; TERM: requeue or end).
	sigjob="trap 'echo USR1 >>$dir/out/\$SLURM_JOB_ID.sig' USR1; trap 'echo TERM >>$dir/out/\$SLURM_JOB_ID.sig; exit 0' TERM"
	sigjob="$sigjob; i=0; while [ \$i -lt 120 ]; do sleep 1; i=\$((i + 1)); done"
	long() { sub --gres=gpu:8 --time=30 --comment "$(claim 1500)" "$@" --wrap "$sigjob"; }
	# The cluster full of jobs that cannot be requeued: a batch job with --no-requeue on n1 (the
	# longest, so srtf's first victim if it could be one), an salloc allocation (not a batch job)
	# on n2. (n3, of partition infer, busy too: the core's allocation counts free GPUs of other
	# partitions as room, and then preempts nothing.)
	bi=$(blocker n3 -p infer)
	nr=$(long -w n1 --no-requeue)
	al=$(timeout 20 salloc --no-shell --gres=gpu:8 -w n2 --time=30 --comment "$(claim 1200)" 2>&1 |
		sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
	wait_state 10 "$nr" RUNNING
	s1=$(sub --gres=gpu:8 --time=2 --comment "$(claim 60)" --wrap 'sleep 1')
	cycles_pass 5
	[ -n "$al" ] && [ "$(st "$s1")" = PENDING ] && [ "$(st "$nr")" = RUNNING ] && [ "$(st "$al")" = RUNNING ] &&
		ok "short JobId=$s1 waits: --no-requeue JobId=$nr and salloc JobId=$al keep their nodes" ||
		ko "short JobId=$s1 $(st "$s1"); --no-requeue JobId=$nr $(st "$nr"); salloc JobId=${al:-none} $(st "${al:-0}")"
	scancel "$s1" ${al:+"$al"}
	wait_done 10 "$s1" ${al:+"$al"}
	# An otherwise identical requeueable job on n2 is preempted for the next short job.
	rq=$(long -w n2 --requeue)
	wait_state 10 "$rq" RUNNING
	s2=$(sub --gres=gpu:8 --time=2 --comment "$(claim 60)" --wrap 'sleep 2')
	wait_state 20 "$s2" RUNNING && s2_ran=yes || s2_ran=no
	wait_done 20 "$s2"
	rec_rq=$(records "$rq") rec_nr=$(records "$nr")
	# The checkpoint request (USR1) first; the requeue (its TERM) when the grace ran out.
	[ $s2_ran = yes ] && [[ "$rec_rq" == *REQUEUED* ]] && [ "$(head -1 "$dir/out/$rq.sig" 2>/dev/null)" = USR1 ] &&
		ok "requeueable JobId=$rq signalled ($(paste -sd' ' "$dir/out/$rq.sig")) and requeued for short JobId=$s2 ($rec_rq)" ||
		ko "requeueable JobId=$rq: $rec_rq, signals '$(cat "$dir/out/$rq.sig" 2>/dev/null | paste -sd' ')'; short JobId=$s2 ran: $s2_ran"
	[ "$rec_nr" = RUNNING ] && [ ! -e "$dir/out/$nr.sig" ] &&
		ok "--no-requeue JobId=$nr never signalled or requeued ($rec_nr)" ||
		ko "--no-requeue JobId=$nr: $rec_nr, signals '$(cat "$dir/out/$nr.sig" 2>/dev/null | paste -sd' ')'"
	scancel "$nr" "$rq" "$bi"
	wait_done 20 "$nr" "$rq" "$bi"
fi

# ---- hints: a runtime claim counts only within [time limit / 10, time limit] (the core), and the
# plugin passes a sane claim and the effective time limit ----
if has hints; then
	b1=$(blocker n1) b2=$(blocker n2) bi=$(blocker n3 -p infer)
	# o: an overflowing claim (1e999 epochs: inf x 0 = NaN in the core), a: a tiny claim, both with
	# a 1-hour limit (so at least 6 minutes); b: an honest 2 minutes with a 5-minute limit.
	o=$(sub --gres=gpu:8 --time=60 --comment "epochs=1e999 epoch_time_1gpu=0.01" --wrap 'sleep 30')
	a=$(sub --gres=gpu:8 --time=60 --comment "epochs=1 epoch_time_1gpu=0.01" --wrap 'sleep 30')
	b=$(sub --gres=gpu:8 --time=5 --comment "$(claim 120)" --wrap 'sleep 60')
	cycles_pass 2
	scancel "$b1"
	wait_state 10 "$b" RUNNING
	[ "$(st "$b")" = RUNNING ] && [ "$(st "$a")" = PENDING ] && [ "$(st "$o")" = PENDING ] &&
		ok "honest 2-minute JobId=$b starts before tiny-claim JobId=$a and overflowing-claim JobId=$o" ||
		ko "first start: honest JobId=$b $(st "$b"), tiny JobId=$a $(st "$a"), overflowing JobId=$o $(st "$o")"
	# b has less than 2 minutes left, less than a's limit / 10: neither a nor o preempts it.
	cycles_pass 4
	rec=$(records "$b")
	[ "$rec" = RUNNING ] && [ "$(st "$a")" = PENDING ] && [ "$(st "$o")" = PENDING ] &&
		ok "JobId=$b not preempted by the tiny or overflowing claims ($rec)" ||
		ko "JobId=$b: $rec; JobId=$a $(st "$a"), JobId=$o $(st "$o")"
	scancel "$b2" "$bi" "$o" "$a" "$b"
	wait_done 20 "$b1" "$b2" "$bi" "$o" "$a" "$b"

	# Without --time a job's limit is its partition's (MaxTime=30 minutes): its honest 5-minute
	# claim counts, and it starts before a 20-minute job (the claim of a job without any limit
	# counts as at least an hour).
	scontrol update PartitionName=train MaxTime=30
	b1=$(blocker n1) b2=$(blocker n2)
	l=$(sub --gres=gpu:8 --time=30 --comment "$(claim 1200)" --wrap 'sleep 10')
	c=$(sub --gres=gpu:8 --comment "$(claim 300)" --wrap 'sleep 10')
	cycles_pass 2
	scancel "$b1"
	wait_state 10 "$c" RUNNING
	[ "$(st "$c")" = RUNNING ] && [ "$(st "$l")" = PENDING ] &&
		ok "JobId=$c without --time bounded by MaxTime=30: its 5-minute claim starts before a 20-minute job" ||
		ko "JobId=$c without --time $(st "$c"), 20-minute JobId=$l $(st "$l")"
	scontrol update PartitionName=train MaxTime=INFINITE
	scancel "$b2" "$l" "$c"
	wait_done 20 "$b1" "$b2" "$l" "$c"
fi

# ---- admin: an administrator's priority stays and places the job; nice goes behind; held waits ----
if has admin; then
	b1=$(blocker n1) b2=$(blocker n2)
	# p: the shortest claim (srtf's first) until an admin sets priority 1000, below dlsched's range:
	# behind every job dlsched orders. n1 (--nice=1000) and n2: equal but for nice. h: held.
	p=$(sub --gres=gpu:8 --time=5 --comment "$(claim 30)" --wrap 'sleep 1')
	scontrol update JobId="$p" Priority=1000
	n1=$(sub --gres=gpu:8 --nice=1000 --time=5 --comment "$(claim 120)" --wrap 'sleep 30')
	n2=$(sub --gres=gpu:8 --time=5 --comment "$(claim 120)" --wrap 'sleep 30')
	h=$(sub --gres=gpu:8 --hold --time=5 --comment "$(claim 60)" --wrap 'sleep 5')
	cycles_pass 3
	prio1=$(prio "$p")
	scancel "$b1"
	wait_state 10 "$n2" RUNNING
	[ "$(st "$n2")" = RUNNING ] && [ "$(st "$n1")" = PENDING ] && [ "$(st "$p")" = PENDING ] && [ "$(st "$h")" = PENDING ] &&
		ok "JobId=$n2 starts first: before its --nice=1000 twin JobId=$n1, admin-pinned JobId=$p and held JobId=$h" ||
		ko "first start: JobId=$n2 $(st "$n2"); nice JobId=$n1 $(st "$n1"); Priority=1000 JobId=$p $(st "$p"); held JobId=$h $(st "$h")"
	cycles_pass 3
	prio2=$(prio "$p")
	[ "$prio1" = 1000 ] && [ "$prio2" = 1000 ] && ok "scontrol update Priority=1000 kept over the cycles (squeue %Q $prio1, $prio2)" ||
		ko "admin priority of JobId=$p: set 1000, squeue %Q $prio1 then $prio2"
	[ "$(st "$h")" = PENDING ] && ! by_dlsched "$h" && ok "held JobId=$h not started ($(reason "$h"))" ||
		ko "held JobId=$h: $(st "$h")"
	scontrol release "$h"
	# Once a cycle has ordered it (a dlsched priority), h ranks strictly above n1 (squeue %Q),
	# also while it waits for the GPUs of a job preempted for it: with a tie Slurm's main
	# scheduler took the lower job id, the --nice job, for those GPUs (seen on 26.05).
	tie=""
	for _ in $(seq 1 16); do
		ph=$(prio "$h") pn=$(prio "$n1")
		[ "$(st "$h")" = PENDING ] && [ "${ph:-0}" -ge 4294901761 ] 2>/dev/null &&
			[ "$ph" -le "${pn:-0}" ] && tie="$ph <= $pn"
		sleep 0.2
	done
	[ -z "$tie" ] && ok "released JobId=$h ordered above the --nice job while it waits" ||
		ko "released JobId=$h pending at priority $tie of the --nice job JobId=$n1"
	cycles_pass 2
	scancel "$b2"
	# h starts before n1: on the next free node, or earlier on the GPUs of a job preempted for it
	# (srtf: its 60 s claim is shorter than n2's remaining 120 s). Compared by the order of the
	# starts in slurmctld's log, not by states: on a loaded machine h (sleep 5) had already run
	# and ended by the time of the check, and n1 had taken the node h left (24.11.5).
	[ -n "$(first_start "$h")" ] || wait_state 10 "$h" RUNNING
	hs=$(first_start "$h") ns=$(first_start "$n1")
	[ -n "$hs" ] && { [ -z "$ns" ] || [ "$ns" -gt "$hs" ]; } &&
		ok "released JobId=$h starts before the --nice job (on the next free node or on a preempted job's)" ||
		ko "released JobId=$h $(st "$h") ($(reason "$h")), started at log line ${hs:-none}; nice JobId=$n1 $(st "$n1"), at ${ns:-none}"
	scancel "$p" "$n1" "$n2" "$h"
	wait_done 20 "$b1" "$b2" "$p" "$n1" "$n2" "$h"

	# An admin lowers a running job's priority (below dlsched's range): that orders the queue; it
	# does not make the job the first victim of srtf for a longer job (n3 busy: see requeue).
	b2=$(blocker n2) bi=$(blocker n3 -p infer)
	r=$(sub --gres=gpu:8 -w n1 --time=5 --comment "$(claim 60)" --wrap 'sleep 60')
	wait_state 10 "$r" RUNNING
	scontrol update JobId="$r" Priority=1000
	w=$(sub --gres=gpu:8 --time=10 --comment "$(claim 240)" --wrap 'sleep 1')
	cycles_pass 4
	# (squeue and the log: an update of a running job can leave sacct showing PENDING for a while)
	[ "$(st "$r")" = RUNNING ] && ! grep -q "requeued JobId=$r " "$log" && [ "$(st "$w")" = PENDING ] &&
		ok "running JobId=$r with admin Priority=1000 not preempted for a longer job" ||
		ko "running JobId=$r with admin Priority=1000: $(st "$r") ($(grep -c "requeued JobId=$r " "$log") requeues); longer JobId=$w $(st "$w")"
	scancel "$b2" "$bi" "$r" "$w"
	wait_done 20 "$b2" "$bi" "$r" "$w"
fi

# ---- shape: the user's node count stays. srtf's plan (pack placement) puts a -N2 -n3
# --gpus-per-task=1 job's 3 GPUs on one node; rewriting the job to that plan made its two-node step
# fail (Slurm's own test39.19 found it). Now the job keeps -N2 and Slurm's select plugin places it.
if has shape; then
	s=$(sbatch --parsable -o "$dir/shape.out" -N2 -n3 --gpus-per-task=1 --time=5 --comment "$(claim 5)" \
		--wrap 'srun -N2 -n2 hostname')
	wait_done 30 "$s"
	shape=$(sacct -n -X -P -o State,NNodes,AllocTRES -j "$s" | head -n1)
	case "$shape" in
	COMPLETED\|2\|*gres/gpu=3*) ok "a -N2 -n3 --gpus-per-task=1 job ran on 2 nodes with 3 GPUs and its two-node step ran ($shape)" ;;
	*) ko "-N2 job $s: $shape; $(grep -E "JobId=$s[^0-9]" "$log" | tail -n2 | tr '\n' ' '); $(head -c 300 "$dir/shape.out" 2>&1)" ;;
	esac
fi

[ $fails -eq 0 ] && echo "all safety checks passed" || echo "$fails safety check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; cleanup; rm -rf "$dir"; }
exit $((fails > 0))
