#!/bin/bash
# A real local GPU cluster: up, GPU jobs through sbatch (one and two nodes), accounting through sacct
# (GPUs in AllocTRES), the errors of `up` (running cluster, busy port), and `down` leaving nothing.
# Skips (77) only where it cannot run: not root, or Slurm/munge/MariaDB not installed.
set -u
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
tool="$top/contribs/cluster/dlsched-cluster"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (private munged, MariaDB and Slurm daemons)"; exit 77; }
for c in slurmctld slurmd slurmdbd munged mariadbd sbatch sacct; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not installed (scripts/install-deps --slurm)"; exit 77; }
done
dir=$(mktemp -d /tmp/dlsched-cluster-test.XXXXXX)
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
fails=0
ok() { echo "PASS: $*"; }
ko() { echo "FAIL: $*"; fails=$((fails + 1)); }
cleanup() { "$tool" down --dir "$dir" >/dev/null 2>&1; rm -rf "$dir"; }
trap cleanup EXIT

if ! "$tool" up --nodes 4 --gpus 8 --inference-nodes 1 --dir "$dir" --port-base $port >"$dir.up" 2>&1; then
	cat "$dir.up"
	echo "FAIL: up"
	exit 1
fi
ok "up: $(head -1 "$dir.up")"
export SLURM_CONF="$dir/etc/slurm.conf"

[ "$(sinfo -h -p train -o '%D %G')" = "4 gpu:8" ] && [ "$(sinfo -h -p infer -o '%D')" = "1" ] &&
	ok "partitions" || ko "partitions: $(sinfo)"

j1=$(sbatch --parsable --gres=gpu:2 -o "$dir/j1.out" --wrap 'echo CVD=$CUDA_VISIBLE_DEVICES')
j2=$(sbatch --parsable -N2 --gres=gpu:8 -o "$dir/j2.out" --wrap 'srun hostname >/dev/null; echo CVD=$CUDA_VISIBLE_DEVICES')
for t in $(seq 1 60); do
	[ -z "$(squeue -h)" ] && break
	sleep 0.5
done
grep -q '^CVD=0,1$' "$dir/j1.out" && ok "GPUs visible to a job" || ko "GPUs visible: $(cat "$dir/j1.out")"
grep -q '^CVD=0,1,2,3,4,5,6,7$' "$dir/j2.out" && ok "two-node job" || ko "two-node job: $(cat "$dir/j2.out")"
# Accounting may lag the job end by a moment.
for t in $(seq 1 20); do
	acct=$(sacct -X -n -P -j "$j1,$j2" -o JobID,State,AllocTRES)
	[ "$(echo "$acct" | grep -c COMPLETED)" -eq 2 ] && break
	sleep 0.5
done
echo "$acct" | grep -q "^$j1|COMPLETED|.*gres/gpu=2" && echo "$acct" | grep -q "^$j2|COMPLETED|.*gres/gpu=16" &&
	ok "sacct: both COMPLETED with their GPUs" || ko "sacct: $acct"

# Replay: five Philly jobs, 20,000x faster, each a dlsched-emu-train process; all complete in sacct.
build="${abs_top_builddir:-$top/_build}"
if "$build/contribs/replay/dlsched-replay" --workload "$top/contribs/traces/philly/philly_2017-10-02_100.csv" \
	--max-jobs 5 --speedup 20000 --out "$dir/replay" >"$dir.replay" 2>&1; then
	for t in $(seq 1 20); do
		n=$(sacct -X -n -P -o JobName,State | grep -c '^dl-[1-5]|COMPLETED$')
		[ "$n" -eq 5 ] && break
		sleep 0.5
	done
	[ "$n" -eq 5 ] && [ "$(tail -n +2 "$dir/replay/jobs.csv" | wc -l)" -eq 5 ] &&
		grep -q '^epoch 1 done' "$dir/replay/$(sed -n 2p "$dir/replay/jobs.csv" | cut -d, -f2).out" &&
		ok "replay: 5 trace jobs completed" || ko "replay: $n of 5 completed; $(sacct -X -n -P -o JobName,State)"
else
	ko "replay: $(cat "$dir.replay")"
fi
rm -f "$dir.replay"

# dlsched-report against the same figures recomputed here from raw sacct (epoch times, ElapsedRaw):
# jobs, completed, average JCT (end of the last record - first submit), GPU-hours.
rep=$("$top/contribs/report/dlsched-report" --format json 2>"$dir.rep-err")
raw=$(SLURM_TIME_FORMAT=%s sacct -X --duplicates -a -n -P -S 1970-01-01 \
	-o JobIDRaw,State,Submit,Start,End,ElapsedRaw,AllocTRES | awk -F'|' '
	{ id = $1; st = $2; sub(/ .*/, "", st)
	  if (!(id in first) || $3 < first[id]) first[id] = $3
	  last_state[id] = st; last_end[id] = $5
	  g = 0; n = split($7, t, ","); for (i = 1; i <= n; i++) if (t[i] ~ /^gres\/gpu=/) { sub(/^gres\/gpu=/, "", t[i]); g = t[i] }
	  gpus += $6 * g }
	END { for (id in first) { jobs++; if (last_state[id] == "COMPLETED") { done++; jct += last_end[id] - first[id] } }
	      printf "%d %d %.6f %.9f\n", jobs, done, done ? jct / done : 0, gpus / 3600 }')
read -r rj rd ra rg <<<"$raw"
/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1]); jobs, done, avg, gh = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
ok = d["jobs"] == jobs and d["completed"] == done and abs(d["avg_jct_s"] - avg) < 1e-3 and abs(d["gpu_hours"] - gh) < 1e-6
sys.exit(0 if ok and jobs >= 7 else 1)' "$rep" $rj $rd $ra $rg 2>/dev/null &&
	ok "dlsched-report equals raw sacct: $rj jobs, $rd completed, avg JCT $ra s, $rg GPU-h" ||
	ko "dlsched-report vs raw sacct ($rj jobs, $rd completed, avg JCT $ra, GPU-h $rg): $rep $(cat "$dir.rep-err")"
rm -f "$dir.rep-err"

"$tool" up --dir "$dir" --port-base $port >"$dir.err" 2>&1
[ $? -eq 1 ] && grep -q "already running in $dir" "$dir.err" && ok "refuses a second up" || ko "second up: $(cat "$dir.err")"
"$tool" up --dir "$dir.other" --port-base $port --nodes 1 >"$dir.err" 2>&1
[ $? -eq 1 ] && grep -q "port $port is busy" "$dir.err" && ok "busy port named" || ko "busy port: $(cat "$dir.err")"
rm -rf "$dir.other"

# A job still running at `down`: its step daemon and its own processes must go too.
jl=$(sbatch --parsable -o /dev/null --wrap 'sleep 100000')
for t in $(seq 1 20); do
	[ "$(squeue -h -j "$jl" -o %T)" = RUNNING ] && break
	sleep 0.5
done
"$tool" down --dir "$dir" >"$dir.down" 2>&1 && ok "$(cat "$dir.down")" || ko "down"
sleep 0.5
# This cluster's processes name its directory in their command line or (slurmdbd, slurmstepd, the
# job's `sleep`) in their environment; other clusters on the machine are not ours to judge.
unset SLURM_CONF
left=""
for p in /proc/[0-9]*; do
	[ "${p#/proc/}" = "$$" ] && continue
	if grep -qs -- "$dir" "$p/cmdline" "$p/environ"; then
		left="$left ${p#/proc/}:$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
	fi
done
[ -z "$left" ] && ok "nothing left running" || ko "left running: $left"
rm -f "$dir.up" "$dir.err" "$dir.down"
echo "cluster: $fails failure(s)"
[ $fails -eq 0 ]
