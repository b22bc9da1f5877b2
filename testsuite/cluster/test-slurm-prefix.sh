#!/bin/bash
# dlsched-cluster up --slurm-prefix: a local GPU cluster on another Slurm release's own daemons and
# commands (scripts/build-slurm --release 24.11|26.05), stock plugins: the daemons and the commands
# are that release's, GPU jobs run (one and two nodes) and show in sacct with their GPUs, status and
# env.sh follow the release, down leaves nothing running. The prefix: $DLSCHED_SLURM_PREFIX, else
# the newest one build-slurm finished in /var/cache/dlsched. Skips (77) without root, without a built
# release, or without munge/MariaDB.
set -u
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
tool="$top/contribs/cluster/dlsched-cluster"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (private munged, MariaDB and Slurm daemons)"; exit 77; }
prefix="${DLSCHED_SLURM_PREFIX:-}"
if [ -z "$prefix" ]; then
	stamp=$(ls -t /var/cache/dlsched/slurm-*/prefix/.dlsched-built 2>/dev/null | head -n1)
	[ -n "$stamp" ] && prefix=$(dirname "$stamp")
fi
[ -n "$prefix" ] && [ -x "$prefix/sbin/slurmctld" ] ||
	{ echo "SKIP: no Slurm release built (scripts/build-slurm --release 26.05, or set DLSCHED_SLURM_PREFIX)"; exit 77; }
for c in munged mariadbd; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not installed (scripts/install-deps --slurm)"; exit 77; }
done
want=$("$prefix/sbin/slurmctld" -V | awk '{print $2}')
dir=$(mktemp -d /tmp/dlsched-prefix-test.XXXXXX)
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
fails=0
ok() { echo "PASS: $*"; }
ko() { echo "FAIL: $*"; fails=$((fails + 1)); }
cleanup() { "$tool" down --dir "$dir" >/dev/null 2>&1; rm -rf "$dir"; }
trap cleanup EXIT

if ! "$tool" up --slurm-prefix "$prefix" --nodes 2 --gpus 4 --dir "$dir" --port-base "$port" >"$dir.up" 2>&1; then
	cat "$dir.up"
	tail -20 "$dir/log/slurmctld.log" 2>/dev/null
	echo "FAIL: up --slurm-prefix $prefix"
	exit 1
fi
ok "up: $(head -1 "$dir.up")"
grep -q "(Slurm $want from $prefix)" "$dir.up" && ok "up says Slurm $want from the prefix" || ko "up: $(head -1 "$dir.up")"
# The commands and daemons of the release: through env.sh, as a user of the cluster would.
. "$dir/env.sh"
[ "$(command -v sbatch)" = "$prefix/bin/sbatch" ] && ok "env.sh: the release's commands" ||
	ko "env.sh: sbatch is $(command -v sbatch)"
ctld=$(readlink -f "/proc/$(cat "$dir/pids/slurmctld.pid")/exe")
[ "$ctld" = "$(readlink -f "$prefix/sbin/slurmctld")" ] && ok "slurmctld is the release's" || ko "slurmctld runs $ctld"
v=$(scontrol show config | awk -F' = ' '/^SLURM_VERSION/ {print $2}')
[ "$v" = "$want" ] && ok "slurmctld reports $v" || ko "slurmctld reports '$v', not $want"
[ "$(sinfo -h -p train -o '%D %G')" = "2 gpu:4" ] && ok "partition: 2 nodes of 4 GPUs" || ko "partition: $(sinfo)"

j1=$(sbatch --parsable --gres=gpu:2 -o "$dir/j1.out" --wrap 'echo CVD=$CUDA_VISIBLE_DEVICES')
j2=$(sbatch --parsable -N2 --gres=gpu:4 -o "$dir/j2.out" --wrap 'srun hostname >/dev/null; echo CVD=$CUDA_VISIBLE_DEVICES')
for t in $(seq 1 60); do
	[ -z "$(squeue -h)" ] && break
	sleep 0.5
done
grep -q '^CVD=0,1$' "$dir/j1.out" && ok "GPUs visible to a job" || ko "GPUs visible: $(cat "$dir/j1.out" 2>&1)"
grep -q '^CVD=0,1,2,3$' "$dir/j2.out" && ok "two-node job" || ko "two-node job: $(cat "$dir/j2.out" 2>&1)"
for t in $(seq 1 20); do
	acct=$(sacct -X -n -P -j "$j1,$j2" -o JobID,State,AllocTRES)
	[ "$(echo "$acct" | grep -c COMPLETED)" -eq 2 ] && break
	sleep 0.5
done
echo "$acct" | grep -q "^$j1|COMPLETED|.*gres/gpu=2" && echo "$acct" | grep -q "^$j2|COMPLETED|.*gres/gpu=8" &&
	ok "sacct: both COMPLETED with their GPUs" || ko "sacct: $acct"

# status finds the release without being told (etc/slurm-prefix).
env -u SLURM_CONF PATH=/usr/sbin:/usr/bin:/sbin:/bin "$tool" status --dir "$dir" >"$dir.status" 2>&1 &&
	grep -qE '^train\*? 2 idle gpu:4' "$dir.status" && ok "status with the release's sinfo" || ko "status: $(cat "$dir.status")"

"$tool" down --dir "$dir" >/dev/null 2>&1
left=$(for f in "$dir"/pids/*.pid; do [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && echo "$f"; done)
[ -z "$left" ] && ok "down: nothing left running" || ko "down left: $left"

rm -f "$dir.up" "$dir.status"
[ "$fails" -eq 0 ] || exit 1
