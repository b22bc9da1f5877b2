#!/usr/bin/env bash
# The dual-agent scheduler learns machine speeds in a real slurmctld (dlsched-cluster, dlsched mode,
# Policy=dual-agent: the shipped DL2 model orders and sizes, gp-placement places; profiling on).
# select/dlsched_cons_tres has no models library: it builds the preset's placement with the
# fallback ordering standing in (dlsched_scheduler_create_placement) and says so.
# A heterogeneous cluster of four 1-GPU nodes: n1 and n2 have V100s, n3 and n4 K80s (gres types);
# n1 is a throttled V100 that runs at 0.2 of its type's speed. Emulated BERT jobs run at their
# node's speed: 2 s an epoch on n2, 2 / 0.494 = 4 s on a K80 (the bundled Gavel profile), 10 s on n1.
#  - before anything is measured the catalog ranks n1 and n2 alike: the first job goes to n1 (the
#    lower index); jobs pinned to n2, n3 and n4 run beside it;
#  - their epochs reach the profile DB with their node, the plugins read them (C ABI 6 epoch
#    samples, ProfileRefresh=1) and the slow node shows in the epoch times;
#  - then new jobs go to the fastest nodes as measured: the first to n2, the next two to the K80s,
#    none to n1 (measured slower than a K80, against the catalog). Without the observations the
#    first would go to n1 again.
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
. "${srcdir:-.}/testsuite/cluster/lib.sh"  # profiled_cluster_test, wait_for, state_of, ...
profiled_cluster_test dual-agent

profiled_cluster_up --nodes 4 --gpus 1 --gpu-types v100:2,k80:2 --node-speed n1=0.2 --policy dual-agent
dlsched_conf Policy=dual-agent SchedInterval=1 ProfileRefresh=1 LearnedGuard=no
grep -q "sched/dlsched: loaded .*preset=dual-agent ordering=dl2 allocation=dl2 placement=gp-placement" "$log" &&
	grep -q "sched/dlsched: note: dl2: model " "$log" && ! grep -q "sched/dlsched: note: dl2: .*instead" "$log" &&
	ok "sched/dlsched runs dual-agent with the shipped model" ||
	ko "sched/dlsched: $(grep -E 'sched/dlsched: (loaded|note)' "$log" | tail -3 | tr '\n' ' ')"
grep -q "select/dlsched_cons_tres: loaded .*preset=dual-agent .*placement=gp-placement" "$log" &&
	grep -q "select/dlsched_cons_tres: note: placement only: .*ordering dl2 -> " "$log" &&
	ok "select/dlsched_cons_tres builds dual-agent's placement (gp-placement) at reconfigure and says what stands in" ||
	ko "select plugin: $(grep 'select/dlsched_cons_tres' "$log" | tail -3 | tr '\n' ' ')"
speeds="$dir/c/etc/emu-node-speeds"
sinfo -h -N -o '%N %G' | sort | tr '\n' ' ' | grep -q "n1 gpu:v100:1 n2 gpu:v100:1 n3 gpu:k80:1 n4 gpu:k80:1" &&
	[ -f "$speeds" ] && ok "typed GPUs: $(sinfo -h -N -o '%N=%G' | sort | tr '\n' ' ')" ||
	ko "nodes: $(sinfo -h -N -o '%N %G' | tr '\n' ' '); $(cat "$speeds" 2>&1)"
node_of() { squeue -h -j "$1" -o %N 2>/dev/null; }
stat_of() { sed -n "s/^$1=//p" "$st"; }
mkdir -p "$dir/out"
# An emulated BERT job on one GPU: EPOCHS epochs of 2 s on a V100 at its type's speed.
bert() {  # bert NAME EPOCHS [sbatch options]
	sbatch --parsable --no-requeue -J "$1" -o "$dir/out/$1.out" --gres=gpu:1 --time=10 --dl-model=bert \
		--dl-epochs="$2" --comment "epoch_time_1gpu=2" "${@:3}" \
		--wrap "exec $emu --model bert --epochs $2 --epoch-time-1gpu 2 --noise 0 --node-speeds $speeds \
			--profiles $top/contribs/profiles"
}
running_on() { is_state "$1" RUNNING && [ -n "$(node_of "$1")" ]; }

# ---- nothing measured: the catalog alone; then one job on each node ----
first=$(bert first 3)
wait_for 30 running_on "$first" && [ "$(node_of "$first")" = n1 ] &&
	ok "before any measurement the first job goes to n1 (V100s alike in the catalog, lowest index)" ||
	ko "job $first: $(state_of "$first") on $(node_of "$first")"
pinned=""
for n in n2 n3 n4; do pinned="$pinned $(bert "on-$n" 3 -w "$n")"; done
for j in $pinned; do wait_for 30 running_on "$j" || ko "pinned job $j: $(state_of "$j")"; done
wait_done 120 "$first" $pinned || ko "the first jobs did not end in 120 s"
for j in "$first" $pinned; do completed "$j" || ko "job $j: $(sacct -n -X -P -o State -j "$j")"; done

# ---- measured: epochs per node in the profile DB, the slow machine slower than a K80 ----
# node,steady epoch seconds (the median of each job's epochs but the first).
epoch_times() { "$dbtool" --db "$db" export epochs 2>/dev/null | awk -F, 'NR > 1 && $11 != "" { print $11 "," $2 "," $4 "," ($7 - $6) }' |
	sort -t, -k1,1 -k2,2n -k3,3n | awk -F, '{ if ($2 != j) { j = $2; n = 0 } else if (++n) print $1 "," $4 }' |
	awk -F, '{ s[$1] += $2; c[$1]++ } END { for (k in s) printf "%s,%.2f\n", k, s[k] / c[k] }' | sort; }
all_measured() { [ "$(epoch_times | wc -l)" -eq 4 ]; }
wait_for 20 all_measured && ok "epochs measured on every node: $(epoch_times | tr '\n' ' ')" ||
	ko "epochs per node: $(epoch_times | tr '\n' ' ')"
t() { epoch_times | awk -F, -v n="$1" '$1 == n { print $2 }'; }
awk -v a="$(t n1)" -v b="$(t n2)" -v c="$(t n3)" -v d="$(t n4)" \
	'BEGIN { exit !(b > 0 && a / b > 4 && a / b < 6.5 && c / b > 1.6 && c / b < 2.5 && d / b > 1.6 && d / b < 2.5) }' &&
	ok "the emulation runs n1 about 5x and the K80s about 2x slower than n2" ||
	ko "epoch times n1 $(t n1), n2 $(t n2), n3 $(t n3), n4 $(t n4)"
wait_for 10 eval '[ "$(stat_of speed_samples)" -ge 4 ]' &&
	ok "sched/dlsched's views carry $(stat_of speed_samples) runs' epoch samples ($(stat_of speed_reads) reads)" ||
	ko "stats: $(grep -E '^speed_' "$st" | tr '\n' ' ')"
sleep 3  # the select plugin's thread reads every ProfileRefresh= (1 s) too

# ---- learned: new jobs on the fastest nodes as measured ----
a=$(bert fast 6)
wait_for 30 running_on "$a" && [ "$(node_of "$a")" = n2 ] &&
	ok "a new job goes to n2, the V100 measured fast (n1 was the catalog's choice)" ||
	ko "job $a: $(state_of "$a") on $(node_of "$a"); $(grep -E "JobId=$a" "$log" | tail -2)"
b=$(bert next 6)
wait_for 30 running_on "$b" && case "$(node_of "$b")" in n3 | n4) true ;; *) false ;; esac &&
	ok "with n2 busy the next goes to a K80 ($(node_of "$b")): n1 measured slower than a K80" ||
	ko "job $b: $(state_of "$b") on $(node_of "$b")"
c=$(bert third 6)
wait_for 30 running_on "$c" && case "$(node_of "$c")" in n3 | n4) [ "$(node_of "$c")" != "$(node_of "$b")" ] ;; *) false ;; esac &&
	ok "and the one after to the other K80 ($(node_of "$c")), n1 left idle" ||
	ko "job $c: $(state_of "$c") on $(node_of "$c")"
scancel "$a" "$b" "$c" 2>/dev/null

"$tool" down --dir "$dir/c" >/dev/null
[ $fails -eq 0 ] && echo "all dual-agent checks passed" || echo "$fails dual-agent check(s) failed"
[ $fails -eq 0 ] && { trap - EXIT; rm -rf "$dir"; }
exit $((fails > 0))
