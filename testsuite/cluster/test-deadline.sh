#!/usr/bin/env bash
# Deadlines in a real slurmctld (dlsched-cluster, dlsched mode, Policy=qos-deadline, profiling on;
# 2 nodes of 4 GPUs):
#  autoscale  a deadline job that would be late at the size it asked for (1 GPU), with an elastic
#             range (--dl-elastic=1:4), is started larger and completes before its deadline;
#  infeasible a job that cannot meet its deadline even at its largest size shows why in squeue's
#             REASON and is handled per DeadlineInfeasible=: best-effort (pending behind the
#             others, the reason shown), hold (held, the reason shown), cancel (state DEADLINE);
#  classes    a --qos=high job needing every GPU waits, with its reason, behind a deadline job it
#             would make late, and stops one whose slack absorbs the stop;
#  report     dlsched-report's deadline completion rate, per QoS and per user, is the one recomputed
#             from raw sacct (deadlines from the admin comment, ends from End).
# Deadline jobs give --time-min so that Slurm's own check (the job cannot finish its minimum before
# its deadline: cancelled) stays out of the way while they wait here; see doc/user-guide.md.
# DLSCHED_DEADLINE_SECTIONS="infeasible" runs only those sections (the report needs the others).
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
build="$(pwd)"
tool="$top/contribs/cluster/dlsched-cluster"
emu="$build/contribs/replay/dlsched-emu-train"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
	{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
ingestd="$build/contribs/ingestd/dlsched-ingestd"
for f in plugins/lib/sched_dlsched.so plugins/lib/spank_dlsched.so plugins/lib/dlsched-collect contribs/ingestd/dlsched-ingestd; do
	[ -e "$build/$f" ] ||
		{ echo "SKIP: $f not built (configure --with-slurm-source, libcurl, munge, libmicrohttpd; scripts/run-tests does it)"; exit 77; }
done

dir=$(mktemp -d /tmp/dlsched-deadline-test.XXXXXX)
chmod 755 "$dir"
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
sections="${DLSCHED_DEADLINE_SECTIONS:-autoscale infeasible classes report}"
fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() { "$tool" down --dir "$dir/c" >/dev/null 2>&1; }
trap cleanup EXIT

if ! "$tool" up --nodes 2 --gpus 4 --dir "$dir/c" --port-base "$port" --mode dlsched --sched-interval 1 \
	--plugin-dir "$build/plugins/lib" --ingestd "$ingestd" --policy qos-deadline --profiles "$top/contribs/profiles" \
	>"$dir/up.log" 2>&1; then
	cat "$dir/up.log"
	echo "Bail out! cluster did not come up"
	exit 1
fi
export SLURM_CONF="$dir/c/etc/slurm.conf"
log="$dir/c/log/slurmctld.log"
db="$dir/c/profiles.db"
st="$dir/c/state/dlsched-sched.stats"
. "$top/testsuite/cluster/lib.sh"  # wait_done, completed
# From 23.11 a reconfigure starts a new slurmctld, whose statistics start from zero (SLURM-NOTES.md):
# conf notes whether it did (new_process=yes).
new_process=no
conf() {  # conf KEY=VALUE...: dlsched.conf for this test, then reconfigure
	local pid0
	{ printf '%s\n' "$@"; echo "ModelProfiles=$top/contribs/profiles"; echo "ProfileDB=$db"; } >"$dir/c/etc/dlsched.conf"
	pid0=$(cat "$dir/c/pids/slurmctld.pid" 2>/dev/null)
	scontrol reconfigure >/dev/null
	sleep 2
	[ "$(cat "$dir/c/pids/slurmctld.pid" 2>/dev/null)" = "$pid0" ] || new_process=yes
}
conf Policy=qos-deadline SchedInterval=1 CheckpointAt=iteration
grep -q "sched/dlsched: loaded .*admission=deadline" "$log" && ok "sched/dlsched runs qos-deadline" ||
	ko "no deadline admission in $(grep 'sched/dlsched: loaded' "$log" | tail -1)"
sacctmgr -n -P list qos format=name | grep -qx deadline && ok "dlsched-cluster created QoS deadline" ||
	ko "no QoS deadline: $(sacctmgr -n -P list qos format=name | tr '\n' ' ')"

mkdir -p "$dir/out"
reason_of() { squeue -h -j "$1" -o %r 2>/dev/null; }
wait_reason() {  # wait_reason SECONDS JOBID TEXT: its REASON contains TEXT
	local t=0
	while [ $t -lt $(($1 * 2)) ]; do
		[[ "$(reason_of "$2")" == *"$3"* ]] && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}
gpus_of() { sacct -n -X -P -o AllocTRES -j "$1" | tail -1 | tr ',' '\n' | sed -n 's/^gres\/gpu=//p'; }
# A cifar10 job emulated at EPOCH1 s per epoch on one GPU, deadline in DUE s, --time-min=1
# --time=LIMIT minutes, QoS deadline; extra sbatch options after.
deadline_job() {  # deadline_job NAME EPOCHS EPOCH1 DUE LIMIT OPTION...
	local name="$1" n="$2" e1="$3" due="$4" limit="$5"
	mkdir -p "$dir/ck/$name"
	sbatch --parsable --requeue --qos=deadline -J "$name" -o "$dir/out/$name.out" --open-mode=append \
		--deadline="now+${due}seconds" --time-min=1 --time="$limit" --dl-model=cifar10 --dl-epochs="$n" \
		--comment "epoch_time_1gpu=$e1" "${@:6}" \
		--wrap "exec $emu --model cifar10 --epochs $n --epoch-time-1gpu $e1 --noise 0 --checkpoint-dir $dir/ck/$name \
			--profiles $top/contribs/profiles"
}
deadline_of() { sacct -n -X -P -o AdminComment -j "$1" | tail -1 | sed -n 's/.*deadline=\([0-9]*\).*/\1/p'; }
admin_comment_of() { scontrol show job "$1" 2>/dev/null | sed -n 's/^ *AdminComment=//p'; }
end_of() { date -d "$(sacct -n -X -P -o End -j "$1" | tail -1)" +%s 2>/dev/null; }

for section in $sections; do case $section in
autoscale)
	# 15 epochs of 14 s on one GPU: 210 s, beyond its 3-minute limit and its 200-s deadline; on 2
	# GPUs, about 110 s. It asks for 1 GPU and may have 4.
	d=$(deadline_job grow 15 14 200 3 --gres=gpu:1 --dl-elastic=1:4)
	wait_done 200 "$d" || ko "the deadline job did not finish in 200 s"
	g=$(gpus_of "$d")
	[ "${g:-0}" -ge 2 ] && ok "the deadline job was started on $g GPUs (it asked for 1)" ||
		ko "it ran on '${g}' GPUs: $(grep "JobId=$d" "$log" | tail -3)"
	grep -q "asked JobId=$d to checkpoint" "$log" && ko "it was started at another size and resized: $(grep "JobId=$d" "$log" | head -3)" ||
		ok "it was not started at 1 GPU first (select/dlsched_cons_tres waited for its sizing)"
	completed "$d" && ok "it completed" || ko "job $d: $(sacct -n -X -P -o State -j "$d" | tr '\n' ' ')"
	dl=$(deadline_of "$d") end=$(end_of "$d")
	[ -n "$dl" ] && [ -n "$end" ] && [ "$end" -le "$dl" ] && ok "it ended $((dl - end)) s before its deadline" ||
		ko "deadline '$dl', end '$end'"
	;;
infeasible)
	# Both nodes busy with jobs that cannot be requeued, so that the deadline jobs wait.
	b1=$(sbatch --parsable --no-requeue -o /dev/null --gres=gpu:4 -w n1 --time=5 --wrap 'sleep 240')
	b2=$(sbatch --parsable --no-requeue -o /dev/null --gres=gpu:4 -w n2 --time=5 --wrap 'sleep 240')
	# 30 epochs of 14 s on its one GPU (rigid): 420 s claimed, capped at its 3-minute limit; 150 s
	# to its deadline. Infeasible at the only size it has.
	conf Policy=qos-deadline SchedInterval=1 DeadlineInfeasible=hold
	ho=$(deadline_job held 30 14 150 3 --gres=gpu:1)
	wait_reason 15 "$ho" "held" && [ "$(squeue -h -j "$ho" -o %Q)" = 0 ] &&
		ok "hold: held (priority 0), squeue shows '$(reason_of "$ho")'" ||
		ko "held job: $(squeue -h -j "$ho" -o '%T %Q %r')"
	# An administrator's release sticks: it runs best-effort, it is not held again.
	scontrol release "$ho"
	wait_reason 10 "$ho" "released: runs best-effort" && [ "$(squeue -h -j "$ho" -o %Q)" != 0 ] &&
		ok "released: not held again, squeue shows '$(reason_of "$ho")'" ||
		ko "released job: $(squeue -h -j "$ho" -o '%T %Q %r')"
	# ... across a restart of slurmctld too: the hold and the release are in the admin comment
	# (they were kept in memory only: a restarted controller held the job again).
	ac=$(admin_comment_of "$ho")
	[[ "$ac" == *dl_held=* && "$ac" == *dl_released=* ]] && ok "hold and release recorded: '$ac'" ||
		ko "admin comment of the released job: '$ac'"
	restart_slurmctld
	sleep 4
	# (Slurm's main scheduler may write its own reason, "Resources", between two cycles.)
	wait_reason 10 "$ho" "released: runs best-effort" && [ "$(squeue -h -j "$ho" -o %Q)" != 0 ] &&
		ok "after a restart the released job is not held again: '$(reason_of "$ho")'" ||
		ko "after a restart: $(squeue -h -j "$ho" -o '%T %Q %r')"
	scancel "$ho"
	conf Policy=qos-deadline SchedInterval=1 DeadlineInfeasible=cancel
	ca=$(deadline_job cancelled 30 14 150 3 --gres=gpu:1)
	wait_done 20 "$ca" || ko "the job to cancel is still queued: $(squeue -h -j "$ca" -o '%T %r')"
	t=0
	while [ $t -lt 20 ] && [ "$(sacct -n -X -P -o State -j "$ca" | tail -1)" != DEADLINE ]; do sleep 0.5; t=$((t + 1)); done
	[ "$(sacct -n -X -P -o State -j "$ca" | tail -1)" = DEADLINE ] &&
		grep -q "JobId=$ca deadline infeasible: .*cancelled" "$log" &&
		ok "cancel: state DEADLINE, the reason logged: $(grep -o "JobId=$ca deadline infeasible.*" "$log" | head -1)" ||
		ko "cancelled job: $(sacct -n -X -P -o State -j "$ca" | tr '\n' ' ') $(grep "JobId=$ca" "$log" | tail -2)"
	conf Policy=qos-deadline SchedInterval=1 DeadlineInfeasible=best-effort
	be=$(deadline_job best-effort 30 14 150 3 --gres=gpu:1)
	wait_reason 15 "$be" "deadline infeasible: needs" &&
		ok "best-effort: squeue shows '$(reason_of "$be")'" || ko "best-effort reason: '$(reason_of "$be")'"
	[[ "$(reason_of "$be")" == *"runs best-effort"* ]] && [ "$(squeue -h -j "$be" -o %T)" = PENDING ] &&
		ok "it is pending, to run best-effort" || ko "job $be: $(squeue -h -j "$be" -o '%T %r')"
	# Three verdicts since the hold test; one since the last reconfigure where that was a new process.
	min=3
	[ "$new_process" = no ] || min=1
	[ "$(sed -n 's/^admission_verdicts=//p' "$st")" -ge $min ] 2>/dev/null &&
		ok "stats: admission_verdicts=$(sed -n 's/^admission_verdicts=//p' "$st")" ||
		ko "stats: $(grep admission "$st")"
	# A deadline as the comment word (dlsched-replay's, for deadlines seconds away): the same verdict.
	cw=$(sbatch --parsable --requeue -o /dev/null --qos=deadline --time=3 --gres=gpu:1 --dl-model=cifar10 --dl-epochs=30 \
		--comment "epoch_time_1gpu=14 deadline=$(($(date +%s) + 150))" --wrap 'sleep 30')
	wait_reason 15 "$cw" "deadline infeasible: needs" && ok "a comment-word deadline is judged too: '$(reason_of "$cw")'" ||
		ko "comment-word deadline job: $(squeue -h -j "$cw" -o '%T %r')"
	# Its owner moves the word (scontrol update Comment=): the deadline first seen stands.
	first=$(admin_comment_of "$cw" | sed -n 's/.*deadline=\([0-9]*\).*/\1/p')
	scontrol update JobId="$cw" Comment="epoch_time_1gpu=14 deadline=$(($(date +%s) + 100000))"
	sleep 3
	now_dl=$(admin_comment_of "$cw" | sed -n 's/.*deadline=\([0-9]*\).*/\1/p')
	[ -n "$first" ] && [ "$now_dl" = "$first" ] && ok "a comment changed later does not move the deadline ($first)" ||
		ko "deadline first $first, after the comment changed $now_dl"
	scancel "$cw"
	# A word Slurm's --deadline check would refuse (not after the job's submission) is no deadline.
	pw=$(sbatch --parsable --requeue -o /dev/null --qos=deadline --time=3 --gres=gpu:1 --dl-model=cifar10 --dl-epochs=30 \
		--comment "epoch_time_1gpu=14 deadline=$(($(date +%s) - 60))" --wrap 'sleep 30')
	sleep 4
	[[ "$(admin_comment_of "$pw")" != *deadline=* && "$(reason_of "$pw")" != *deadline* ]] &&
		ok "a deadline word before the job's submission is ignored" ||
		ko "past deadline word: admin comment '$(admin_comment_of "$pw")', reason '$(reason_of "$pw")'"
	scancel "$pw"
	scancel "$b1" "$b2"
	# The best-effort job runs once the GPUs are free (and misses its deadline).
	t=0
	while [ $t -lt 60 ] && [ "$(squeue -h -j "$be" -o %T)" != RUNNING ]; do sleep 0.5; t=$((t + 1)); done
	[ "$(squeue -h -j "$be" -o %T)" = RUNNING ] && ok "the best-effort job runs once the GPUs are free" ||
		ko "the best-effort job did not start: $(squeue -h -j "$be" -o '%T %r')"
	sleep 5  # GPU-time spent on a job that misses its deadline (for the report)
	scancel "$be"
	wait_done 30 "$be"
	# A held job is judged again every cycle (it was held for good): its owner lowers its time
	# limit (its claim counts only within it) to one that fits its deadline, and it is released.
	conf Policy=qos-deadline SchedInterval=1 DeadlineInfeasible=hold
	hw=$(deadline_job rejudged 30 14 150 3 --gres=gpu:1)
	wait_reason 15 "$hw" "held" || ko "the job to judge again was not held: $(squeue -h -j "$hw" -o '%T %Q %r')"
	scontrol update JobId="$hw" TimeLimit=1
	wait_for 15 grep -q "JobId=$hw released: its deadline is feasible again" "$log" &&
		[ "$(squeue -h -j "$hw" -o %Q)" != 0 ] && [[ "$(admin_comment_of "$hw")" == *dl_released=* ]] &&
		ok "a held job that fits its deadline again is released: $(squeue -h -j "$hw" -o '%T %r')" ||
		ko "held job $hw after its limit was lowered: $(squeue -h -j "$hw" -o '%T %Q %r'); $(grep "JobId=$hw" "$log" | tail -2)"
	scancel "$hw"
	wait_done 30 "$hw"
	;;
classes)
	# Priority classes against deadline work (doc/admin-guide.md): a --qos=high job needing all 8
	# GPUs (2-minute limit: it holds them about that long) and a running 1-GPU deadline job.
	conf Policy=qos-deadline SchedInterval=1 CheckpointAt=iteration
	# 20 epochs of 6 s (120 s) due in 200 s: feasible, about 80 s of slack, less than the 120 s and
	# more the high job would cost it: it keeps its GPU, and the high job's REASON says why.
	t1=$(deadline_job tight 20 6 200 4 --gres=gpu:1)
	wait_for 30 is_state "$t1" RUNNING || ko "the tight deadline job did not start: $(squeue -h -j "$t1" -o '%T %r')"
	h1=$(sbatch --parsable --requeue -o /dev/null --qos=high -N 2 --gres=gpu:4 --time=2 --wrap 'sleep 5')
	wait_reason 15 "$h1" "waits for deadline work it would make late: job $t1" &&
		ok "the high job waits, squeue shows '$(reason_of "$h1")'" ||
		ko "high job: $(squeue -h -j "$h1" -o '%T %r')"
	grep -q "asked JobId=$t1 to checkpoint" "$log" && ko "the tight deadline job was stopped" ||
		ok "the deadline job it would make late was not stopped"
	scancel "$h1" "$t1"
	wait_done 30 "$h1" "$t1"
	# Due in 1000 s: its slack absorbs the stop: it is checkpointed and the high job runs.
	t2=$(deadline_job ample 20 6 1000 20 --gres=gpu:1)
	wait_for 30 is_state "$t2" RUNNING || ko "the ample deadline job did not start: $(squeue -h -j "$t2" -o '%T %r')"
	h2=$(sbatch --parsable --requeue -o /dev/null --qos=high -N 2 --gres=gpu:4 --time=2 --wrap 'sleep 5')
	wait_for 20 grep -q "asked JobId=$t2 to checkpoint" "$log" &&
		ok "a deadline job with slack to spare is stopped for the high job" ||
		ko "job $t2 not stopped: $(squeue -h -j "$h2" -o '%T %r'); $(grep "JobId=$t2" "$log" | tail -2)"
	wait_done 120 "$h2" && completed "$h2" && ok "the high job ran" ||
		ko "high job $h2: $(sacct -n -X -P -o State -j "$h2" | tr '\n' ' ')"
	scancel "$t2"
	wait_done 30 "$t2"
	;;
report)
	sleep 3  # accounting catches up
	"$top/contribs/report/dlsched-report" --format json >"$dir/report.json" 2>"$dir/report.err" ||
		ko "dlsched-report failed: $(cat "$dir/report.err")"
	# Recomputed from raw sacct: every job with a deadline in its admin comment; met when it
	# completed by its deadline.
	sacct -n -X -P -a -S now-1hour -o JobIDRaw,User,QOS,State,End,AdminComment >"$dir/sacct.txt"
	want=$(awk -F'|' '
		{ dl = ""; if (match($6, /deadline=[0-9]+/)) dl = substr($6, RSTART + 9, RLENGTH - 9)
		  if (dl == "") next
		  cmd = "date -d \"" $5 "\" +%s"; end = ""; if ($5 != "Unknown") { cmd | getline end; close(cmd) }
		  met = ($4 == "COMPLETED" && end != "" && end + 0 <= dl + 0)
		  n[$3]++; m[$3] += met; nu[$2]++; mu[$2] += met }
		END { for (q in n) printf "qos %s %d %d\n", q, m[q], n[q]; for (u in nu) printf "user %s %d %d\n", u, mu[u], nu[u] }' \
		"$dir/sacct.txt" | sort)
	got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["deadlines"]
for kind, key in (("qos", "by_qos"), ("user", "by_user")):
    for name, r in d[key].items():
        print(kind, name, r["met"], r["jobs"])' "$dir/report.json" | sort)
	[ -n "$want" ] && [ "$got" = "$want" ] && ok "dlsched-report's deadline rates match sacct: $(echo "$got" | tr '\n' ';')" ||
		ko "report '$(echo "$got" | tr '\n' ';')', sacct '$(echo "$want" | tr '\n' ';')'"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["deadlines"]
sys.exit(0 if d["infeasible_at_submit"] >= 1 and d["missed_gpu_hours"] > 0 else 1)' "$dir/report.json" &&
		ok "infeasible at submit and GPU-hours on misses reported: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["deadlines"]; print(d["infeasible_at_submit"], round(d["missed_gpu_hours"], 4))' "$dir/report.json")" ||
		ko "report: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("deadlines"))' "$dir/report.json")"
	;;
esac; done

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all deadline checks passed" || echo "$fails deadline check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
