# Helpers the local-cluster tests share (sourced; the cluster's SLURM_CONF is in the environment).

# Another Slurm release's daemons and commands (scripts/run-tests --slurm 24.11|26.05): with
# DLSCHED_SLURM_PREFIX set, dlsched-cluster starts that prefix's daemons and the tests run its commands.
if [ -n "${DLSCHED_SLURM_PREFIX:-}" ]; then
	[ -x "$DLSCHED_SLURM_PREFIX/sbin/slurmctld" ] ||
		{ echo "Bail out! DLSCHED_SLURM_PREFIX=$DLSCHED_SLURM_PREFIX has no sbin/slurmctld (scripts/build-slurm)"; exit 99; }
	case ":$PATH:" in
	*":$DLSCHED_SLURM_PREFIX/bin:"*) ;;
	*)
		export PATH="$DLSCHED_SLURM_PREFIX/bin:$DLSCHED_SLURM_PREFIX/sbin:$PATH"
		export LD_LIBRARY_PATH="$DLSCHED_SLURM_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		;;
	esac
fi

wait_done() {  # wait_done SECONDS JOBID...: until none of them is in the queue
	local t=0 j left
	while [ $t -lt $(($1 * 2)) ]; do
		left=0
		for j in "${@:2}"; do squeue -h -j "$j" 2>/dev/null | grep -q . && left=1; done
		[ $left -eq 0 ] && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}

# Accounting lags slurmctld: a job gone from squeue may not have its final state in sacct yet.
completed() {  # completed JOBID: its sacct state becomes COMPLETED within 10 s
	local t=0
	while [ $t -lt 20 ]; do
		[ "$(sacct -n -X -P -o State -j "$1" | tail -n1)" = COMPLETED ] && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}

# The start of a test on a profiled local cluster (sched/dlsched, spank/dlsched, the collector and
# dlsched-ingestd): sets top, build, tool, emu, dbtool, ingestd, dir (a fresh /tmp/dlsched-NAME-test.*),
# port, fails, ok/ko and a trap that takes the cluster down; skips (77) when something is missing.
profiled_cluster_test() {  # profiled_cluster_test NAME
	top="${srcdir:-.}"
	top="$(cd "$top" && pwd)"
	build="$(pwd)"
	tool="$top/contribs/cluster/dlsched-cluster"
	emu="$build/contribs/replay/dlsched-emu-train"
	dbtool="$build/contribs/db/dlsched-db"
	ingestd="$build/contribs/ingestd/dlsched-ingestd"
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
	command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
		{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
	local f
	for f in plugins/lib/sched_dlsched.so plugins/lib/spank_dlsched.so plugins/lib/dlsched-collect contribs/ingestd/dlsched-ingestd; do
		[ -e "$build/$f" ] ||
			{ echo "SKIP: $f not built (configure --with-slurm-source, libcurl, munge, libmicrohttpd; scripts/run-tests does it)"; exit 77; }
	done
	dir=$(mktemp -d "/tmp/dlsched-$1-test.XXXXXX")
	chmod 755 "$dir"
	port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
	fails=0
	trap '"$tool" down --dir "$dir/c" >/dev/null 2>&1' EXIT
}
# Starts the local cluster in dlsched mode with profiling (after profiled_cluster_test) with the
# given extra dlsched-cluster options; sets SLURM_CONF, log (slurmctld's), db (the profile DB) and st
# (sched/dlsched's stats file). Bails out when it does not come up.
profiled_cluster_up() {  # profiled_cluster_up [dlsched-cluster up options...]
	if ! "$tool" up --dir "$dir/c" --port-base "$port" --mode dlsched --sched-interval 1 \
		--build-dir "$build" --profiles "$top/contribs/profiles" "$@" \
		>"$dir/up.log" 2>&1; then
		cat "$dir/up.log"
		echo "Bail out! cluster did not come up"
		exit 1
	fi
	export SLURM_CONF="$dir/c/etc/slurm.conf"
	log="$dir/c/log/slurmctld.log"
	db="$dir/c/profiles.db"
	st="$dir/c/state/dlsched-sched.stats"
}
# dlsched.conf for the test: the given Key=Value lines, the profile DB and the model profiles; then
# scontrol reconfigure, and time for sched/dlsched to load it.
dlsched_conf() {  # dlsched_conf KEY=VALUE...
	{ printf '%s\n' "$@"; echo "ProfileDB=$db"; echo "ModelProfiles=$top/contribs/profiles"; } >"$dir/c/etc/dlsched.conf"
	scontrol reconfigure >/dev/null
	sleep 3
}
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }

wait_for() {  # wait_for SECONDS COMMAND...: until the command succeeds (checked every 0.5 s)
	local t=0
	while [ $t -lt $(($1 * 2)) ]; do
		"${@:2}" && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}
state_of() { squeue -h -j "$1" -o %T 2>/dev/null; }
is_state() { [ "$(state_of "$1")" = "$2" ]; }  # is_state JOBID STATE
# A job's epochs in the profile DB ($db) as "epoch,run" lines, by epoch; is_sequence N: exactly 1..N.
epochs_of() { "$dbtool" --db "$db" export epochs 2>/dev/null | awk -F, -v j="$1" '$2 == j { print $4 "," $3 }' | sort -t, -n -k1,1; }
is_sequence() { awk -F, -v n="$1" '{ if ($1 != NR) bad = 1 } END { exit !(NR == n && !bad) }'; }
# slurmctld of the test's cluster: stopped (and waited for), started again (and waited until it
# answers), or both. Its output goes to $dir/restart.log. Each says what went wrong through ko and
# returns 1.
stop_slurmctld() {
	local pid
	pid=$(cat "$dir/c/pids/slurmctld.pid")
	kill "$pid"
	wait_for 20 sh -c "! kill -0 $pid 2>/dev/null" || { ko "slurmctld did not stop"; return 1; }
}
start_slurmctld() {
	"$dir/c/bin/slurmctld" -f "$SLURM_CONF" >>"$dir/restart.log" 2>&1
	wait_for 30 scontrol ping >/dev/null || { ko "slurmctld did not come back: $(tail -3 "$dir/restart.log")"; return 1; }
}
restart_slurmctld() { stop_slurmctld && start_slurmctld; }

# The positions of the test's jobs ("${ids[@]}", in submission order; $joblist: the same, comma-
# separated) by Slurm priority, highest first (1 = first submitted); "" until dlsched has set every
# one (above priority/basic's range, 0xffff0000). test-learned, test-guard.
slurm_order() {
	local out
	out=$(squeue -h -t PD -j "$joblist" -o '%Q %i' 2>/dev/null | sort -k1,1nr -k2,2n)
	[ "$(echo "$out" | awk '$1 > 4294901760' | wc -l)" -eq ${#ids[@]} ] || return 0
	echo "$out" | while read -r _ id; do
		for k in "${!ids[@]}"; do [ "${ids[$k]}" = "$id" ] && echo "$((k + 1))"; done
	done | paste -sd' '
}
wait_order() {  # wait_order SECONDS WANT: until Slurm's order is WANT; prints the last one seen
	local t=0 got=""
	while [ $t -lt $(($1 * 2)) ]; do
		got=$(slurm_order)
		[ "$got" = "$2" ] && break
		sleep 0.5
		t=$((t + 1))
	done
	echo "$got"
}
