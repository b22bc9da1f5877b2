#!/usr/bin/env bash
# dlsched-train end to end on a toy workload (seeded, about a minute on one core):
#  - a supervised warm-up on srtf's decisions must beat the untrained (random) network's average JCT on
#    a workload it did not train on, in dlsched-sim with the same dl2 policy;
#  - the shipped model's learned allocation resizes running elastic jobs;
#  - rl writes its curve, checkpoints and resumes; sacct rounds from a hand-made history; bad inputs;
#  - --config's RequeueDelay= and PreemptGrace= reach the simulations.
set -uo pipefail
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
build="${abs_top_builddir:-$top/_build}"
train="$build/contribs/train/dlsched-train"
sim="$build/contribs/sim/dlsched-sim"
if [ ! -x "$train" ]; then
	echo "SKIP: dlsched-train not built (configure found no libtorch)"
	exit 77
fi
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
pollux="$top/contribs/traces/pollux"
export DLSCHED_DATADIR="$top/contribs"

"$train" init --out "$t/rand.pt" --seed 3 >/dev/null || bad "init"
"$train" sl --init "$t/rand.pt" --out "$t/sl.pt" --teacher srtf --workloads "$pollux/workload-1.csv,$pollux/workload-2.csv" \
	--cluster 2x8 --jobs 160 --load-min 1.5 --load-max 2.5 --episodes 4 --epochs 4 --seed 1 --quiet >"$t/sl.out" 2>&1 \
	&& ok "sl ran: $(tail -1 "$t/sl.out")" || { bad "sl"; cat "$t/sl.out"; }

jct() {  # avg JCT of dl2 with model $1 on a workload it did not train on
	"$sim" run --workload "$pollux/workload-7.csv" --cluster 2x8 --load 2 --policy dl2 --set "ModelFile=$1" \
		--quiet --json "$t/run.json" >/dev/null 2>"$t/sim.err" || { cat "$t/sim.err"; echo 0; return; }
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["avg_jct_s"])' "$t/run.json"
}
before="$(jct "$t/rand.pt")"
after="$(jct "$t/sl.pt")"
if python3 -c 'import sys; b,a=map(float,sys.argv[1:]); sys.exit(0 if 0 < a < b*0.98 else 1)' "$before" "$after"; then
	ok "trained model beats its untrained start on an unseen workload: avg JCT ${before}s -> ${after}s"
else
	bad "trained model did not improve: avg JCT ${before}s -> ${after}s"
fi

# rl: curve, checkpoints, resume.
"$train" rl --init "$t/sl.pt" --out "$t/rl.pt" --workloads "$pollux/workload-1.csv" --validate "$pollux/workload-3.csv" \
	--val-loads 2 --cluster 2x8 --jobs 160 --iterations 2 --episodes 1 --rollouts 2 --ppo-epochs 1 --seed 1 --quiet \
	--curve "$t/curve.csv" --checkpoint-dir "$t/ck" >"$t/rl.out" 2>&1 || { bad "rl"; cat "$t/rl.out"; }
[ "$(wc -l <"$t/curve.csv")" -eq 4 ] && ok "curve: header + start + 2 iterations" || bad "curve lines: $(wc -l <"$t/curve.csv")"
[ -s "$t/ck/last.pt" ] && [ -s "$t/ck/best.pt" ] && [ "$(cat "$t/ck/state")" = 2 ] && ok "checkpoints" || bad "checkpoints"
"$train" rl --init "$t/sl.pt" --out "$t/rl2.pt" --workloads "$pollux/workload-1.csv" --validate "$pollux/workload-3.csv" \
	--val-loads 2 --cluster 2x8 --jobs 160 --iterations 1 --episodes 1 --rollouts 2 --ppo-epochs 1 --seed 1 --quiet \
	--curve "$t/curve.csv" --checkpoint-dir "$t/ck" --resume >"$t/rl2.out" 2>&1 || { bad "rl --resume"; cat "$t/rl2.out"; }
[ "$(tail -1 "$t/curve.csv" | cut -d, -f1)" = 3 ] && [ "$(cat "$t/ck/state")" = 3 ] && ok "resume continues at iteration 3" \
	|| bad "resume: $(tail -1 "$t/curve.csv")"
"$train" info "$t/rl2.pt" | grep -q '"stage":"ppo"' && ok "info shows the training stages" || bad "info"
"$train" info "$t/rl.pt" | grep -q '"baseline":"sibling rollouts at the same time".*"reference_validation_slowdown":[0-9]' \
	&& ok "rl: sibling-rollout baseline and the srtf reference recorded" || bad "rl provenance: $("$train" info "$t/rl.pt" | tail -3)"

# sl --dagger: the model acts, srtf labels; one round, validated, the better model kept.
"$train" sl --init "$t/sl.pt" --out "$t/dagger.pt" --teacher srtf --workloads "$pollux/workload-1.csv" \
	--validate "$pollux/workload-3.csv" --val-loads 2 --cluster 2x8 --jobs 160 --episodes 2 --epochs 1 --dagger 1 \
	--seed 1 >"$t/dagger.out" 2>&1 || { bad "sl --dagger"; cat "$t/dagger.out"; }
if grep -q "dagger round 1/1: +[1-9][0-9]* rounds" "$t/dagger.out" &&
	"$train" info "$t/dagger.pt" | python3 -c '
import json, sys
line = [l for l in sys.stdin if l.strip().startswith("training: ")][0]
st = json.loads(line.split("training: ", 1)[1])["stages"][-1]
sys.exit(0 if st["dagger_rounds"] == 1 and st["best_validation_slowdown"] <= st["validation_after_sl"] else 1)'; then
	ok "sl --dagger: $(grep "dagger round" "$t/dagger.out" | tr -d '\r')"
else
	bad "sl --dagger: $(tr '\r' '\n' <"$t/dagger.out" | tail -3)"
fi
"$train" sl --out "$t/z.pt" --teacher slurm-backfill --dagger 1 --workloads "$pollux/workload-1.csv" --cluster 2x8 \
	--jobs 100 --episodes 1 --epochs 1 --quiet 2>"$t/err" && bad "dagger with a non-preemptive teacher accepted" \
	|| { grep -q "neither preempts nor resizes" "$t/err" && ok "sl refuses a teacher whose decisions are not labels" || { bad "teacher message"; cat "$t/err"; }; }

# The learned allocation resizes: the shipped model (trained with half of the jobs elastic), in
# dlsched-sim on a workload it did not train on, grows or shrinks running elastic jobs. (A model
# trained here for a minute learns to keep what jobs hold; test_models checks that a model taught
# to grow a job does.)
"$sim" run --workload "$pollux/workload-7.csv" --cluster 2x8 --load 1 --policy dl2 --set "ModelFile=$top/models/dl2.pt" \
	--elastic-fraction 0.5 --restart-cost model --estimates predicted --quiet --json "$t/el.json" >/dev/null 2>"$t/el.err" \
	|| { bad "dl2 on elastic jobs"; cat "$t/el.err"; }
resizes="$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]; print(r["resizes"] if not r.get("fallback") else -1)' "$t/el.json" 2>/dev/null || echo -1)"
[ "${resizes:--1}" -gt 0 ] && ok "the shipped model's learned allocation resized running elastic jobs ($resizes resizes)" \
	|| bad "the learned allocation never resized an elastic job (resizes: $resizes; -1: the model fell back)"

# --out is checked before any training: a missing directory is named at once.
"$train" sl --out "$t/no/such/dir/m.pt" --teacher srtf --workloads "$pollux/workload-1.csv" --cluster 2x8 --jobs 100 \
	--episodes 1 --epochs 1 --quiet 2>"$t/err" >/dev/null && bad "sl wrote into a missing directory" \
	|| { grep -q "^dlsched-train: --out $t/no/such/dir/m.pt: directory $t/no/such/dir does not exist" "$t/err" \
		&& [ "$(wc -l <"$t/err")" -eq 1 ] && ok "--out checked before training, in one line" || { bad "--out message"; cat "$t/err"; }; }

# sacct: one node of 8 GPUs; at 00:10 two jobs wait and the short one started first.
cat >"$t/sacct.txt" <<'S'
JobID|User|Submit|Start|End|AllocTRES|Comment
1|alice|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:10:00|cpu=8,gres/gpu=8|model=cifar10 epochs=10 epoch_time_1gpu=480
2|bob|2026-01-01T00:01:00|2026-01-01T00:20:00|2026-01-01T02:00:00|cpu=8,gres/gpu=8|model=bert epochs=10 epoch_time_1gpu=4800
3|carol|2026-01-01T00:02:00|2026-01-01T00:10:00|2026-01-01T00:20:00|cpu=8,gres/gpu=8|model=cifar10 epochs=10 epoch_time_1gpu=480
4|dave|2026-01-01T00:03:00|Unknown|Unknown|cpu=8,gres/gpu=8|
S
"$train" sacct --sacct "$t/sacct.txt" --cluster 1x8 --out "$t/sacct.pt" --epochs 2 >"$t/sacct.out" 2>&1 \
	&& grep -q "3 start times, 1 with a choice" "$t/sacct.out" && ok "sacct: $(cat "$t/sacct.out")" \
	|| { bad "sacct"; cat "$t/sacct.out"; }
# The same history read as an emulated cluster's (--time-scale): other features, so another model
# from the same start (its agreement with the history differs); at scale 1, the same as without.
"$train" sacct --sacct "$t/sacct.txt" --cluster 1x8 --out "$t/sacct1.pt" --epochs 2 --time-scale 1 >"$t/sacct1.out" 2>&1 &&
	"$train" sacct --sacct "$t/sacct.txt" --cluster 1x8 --out "$t/sacct60.pt" --epochs 2 --time-scale 60 >"$t/sacct60.out" 2>&1 &&
	[ "$(sed 's/: wrote .*//' "$t/sacct.out")" = "$(sed 's/: wrote .*//' "$t/sacct1.out")" ] &&
	[ "$(sed 's/: wrote .*//' "$t/sacct.out")" != "$(sed 's/: wrote .*//' "$t/sacct60.out")" ] &&
	ok "sacct --time-scale reads the history in real hours" ||
	{ bad "sacct --time-scale: no effect, or not deterministic"; cat "$t/sacct.out" "$t/sacct1.out" "$t/sacct60.out"; }
printf 'JobID|Submit|Start|End\n1|yesterday|x|y\n' >"$t/bad.txt"
"$train" sacct --sacct "$t/bad.txt" --cluster 1x8 --out "$t/x.pt" 2>"$t/err" && bad "bad sacct accepted" \
	|| { grep -q "bad.txt:2: Submit 'yesterday'" "$t/err" && ok "bad sacct line named" || { bad "bad sacct message"; cat "$t/err"; }; }

# online: experience as sched/dlsched records it (here from dlsched-sim --record-experience), then
# advantage-weighted regression; the cluster is the table's only one unless named. The guard off:
# with it the heuristic decides until the learned policy wins a replay, and only the learned
# policy's rounds are experience.
"$sim" run --workload "$pollux/workload-7.csv" --cluster 2x8 --load 2 --max-jobs 60 --policy dl2 --set "ModelFile=$t/sl.pt" \
	--set LearnedGuard=no --quiet --record-experience "$t/exp.db" >/dev/null 2>"$t/rec.err" || { bad "sim --record-experience"; cat "$t/rec.err"; }
"$train" online --init "$t/sl.pt" --db "$t/exp.db" --out "$t/online.pt" --epochs 1 >"$t/online.out" 2>&1 &&
	grep -q "^\[online\] cluster 'dlsched-sim'" "$t/online.out" &&
	"$train" info "$t/online.pt" | grep -q '"stage":"online-awr","db":"[^"]*","cluster":"dlsched-sim"' &&
	ok "online fine-tuned from dlsched-sim's recorded experience:$(tail -1 "$t/online.out" | cut -d: -f3 | cut -d, -f1-2)" ||
	{ bad "online from recorded experience"; cat "$t/rec.err" "$t/online.out"; }
if command -v sqlite3 >/dev/null; then
	sqlite3 "$t/exp.db" "UPDATE experience SET cluster = 'other' WHERE rowid % 2 = 0"
	"$train" online --init "$t/sl.pt" --db "$t/exp.db" --out "$t/x.pt" 2>"$t/err" && bad "online guessed among two clusters" ||
		{ grep -q "experience from several clusters (dlsched-sim ([0-9]* rows), other ([0-9]* rows)): pass --cluster-name" "$t/err" &&
			ok "online names the clusters when there are several" || { bad "online clusters message"; cat "$t/err"; }; }
fi

# --config: the site's RequeueDelay= and PreemptGrace= hold in the simulations, as in dlsched-sim's
# (before, dlsched-train had no way to be given them: its simulations ran without a requeue delay).
# srtf's requeued jobs wait 900 s before they start again: the teacher's run has more rounds and a
# higher slowdown than without the file.
printf 'RequeueDelay=900\nPreemptGrace=30\n' >"$t/site.conf"
teach() {  # teach [--config FILE]: srtf's rounds and slowdown on a small slice
	"$train" sl --init "$t/rand.pt" --out "$t/c.pt" --teacher srtf --workloads "$pollux/workload-1.csv" \
		--validate "$pollux/workload-2.csv" --cluster 2x8 --jobs 60 --episodes 1 --epochs 1 --seed 1 \
		--restart-cost 30 "$@" 2>&1 | sed -n 's/^\[sl\] \([0-9]* decision rounds\).*(teacher slowdown \([0-9.]*x\)).*/\1, \2/p'
}
plain="$(teach)"
delayed="$(teach --config "$t/site.conf")"
[ -n "$plain" ] && [ -n "$delayed" ] && [ "$plain" != "$delayed" ] &&
	ok "--config's RequeueDelay= and PreemptGrace= reach the simulations ($plain -> $delayed)" ||
	bad "--config made no difference: '$plain' vs '$delayed'"
printf 'RequeueDelay=soon\n' >"$t/bad.conf"
"$train" sl --config "$t/bad.conf" 2>"$t/err"; [ $? -eq 2 ] && grep -q "bad.conf:1" "$t/err" &&
	ok "a bad --config is refused, naming the line" || { bad "bad --config"; cat "$t/err"; }

# Bad inputs: a corrupt model, an unknown option, online without experience.
echo garbage >"$t/corrupt.pt"
"$train" sl --init "$t/corrupt.pt" --out "$t/y.pt" 2>"$t/err" && bad "corrupt model accepted" \
	|| { grep -q "corrupt.pt: cannot read the model" "$t/err" && ok "corrupt model named" || { bad "corrupt message"; cat "$t/err"; }; }
"$train" rl --bogus 2>"$t/err"; [ $? -eq 2 ] && grep -q "unknown option '--bogus'" "$t/err" && ok "unknown option" || bad "unknown option"
"$sim" run --workload "$pollux/workload-7.csv" --cluster 2x8 --policy dl2 --set "ModelFile=$t/corrupt.pt" --quiet >/dev/null 2>"$t/err" \
	&& ok "dl2 with a corrupt model still runs (falls back)" || { bad "dl2 fallback in the simulator"; cat "$t/err"; }

echo "test-train: $fails failure(s)"
[ "$fails" -eq 0 ]
