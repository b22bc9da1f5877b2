#!/usr/bin/env bash
# dlsched-train site end to end on a toy history (seconds): the report card's JSON, the refusal (a
# model that does not beat the best heuristic on the held-out part is not written, exit status 3),
# --force, a history from sacct records, and bad inputs.
set -uo pipefail
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
build="${abs_top_builddir:-$top/_build}"
train="$build/contribs/train/dlsched-train"
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
tiny=(--cluster 2x8 --jobs 60 --episodes 1 --epochs 1 --iterations 1 --rollouts 2 --ppo-epochs 1 --seed 1
	--elastic-fraction 0.5)

# One epoch of warm-up and one PPO iteration do not beat the best heuristic: refused, nothing written.
"$train" site --workload "$pollux/workload-1.csv" "${tiny[@]}" --out "$t/site.pt" --json "$t/card.json" \
	>"$t/site.out" 2>"$t/site.err"
rc=$?
if [ "$rc" -eq 3 ] && [ ! -e "$t/site.pt" ] && grep -q "does not beat .* not written" "$t/site.out"; then
	ok "refused: $(tail -1 "$t/site.out")"
else
	bad "refusal: exit $rc, model $( [ -e "$t/site.pt" ] && echo written || echo absent)"
	cat "$t/site.out" "$t/site.err"
fi
python3 - "$t/card.json" <<'P' && ok "report card JSON: policies, JCTs, preemptions, ratios" || bad "report card JSON keys"
import json, sys
c = json.load(open(sys.argv[1]))
for p in ("srtf", "mckp", "optimus", "tiresias-las", "dl2"):
    for k in ("avg_jct_s", "p99_jct_s", "preemptions"):
        assert k in c["policies"][p], (p, k)
best = c["best_heuristic"]
assert best in ("srtf", "mckp", "optimus", "tiresias-las")
r = c["ratios"]
assert abs(r["avg_jct_vs_best"] - c["policies"]["dl2"]["avg_jct_s"] / c["policies"][best]["avg_jct_s"]) < 1e-6
assert "p99_jct_vs_best" in r and "avg_jct_vs_optimus" in r
assert min(c["policies"][h]["avg_jct_s"] for h in ("srtf", "mckp", "optimus", "tiresias-las")) == c["policies"][best]["avg_jct_s"]
assert c["jobs"] == 160 and c["train_jobs"] == 112 and c["heldout_jobs"] == 48
assert c["estimates"] == "predicted" and c["restart_cost"] == "model"
assert c["beats_best"] is False and c["written"] is False
P
grep -q "stage 1/4.*elapsed" "$t/site.err" && grep -q "stage 4/4" "$t/site.err" && grep -q "ETA" "$t/site.err" \
	&& ok "progress lines: stages, elapsed, ETA" || bad "progress lines: $(head -3 "$t/site.err")"

# --force writes the same model anyway, with the report card in its provenance.
"$train" site --workload "$pollux/workload-1.csv" "${tiny[@]}" --out "$t/forced.pt" --force --quiet >"$t/force.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && [ -s "$t/forced.pt" ] && grep -q "(--force)" "$t/force.out" &&
	"$train" info "$t/forced.pt" | grep -q '"stage":"site","report_card":{.*"beats_best":false' \
	&& ok "--force writes it: $(tail -1 "$t/force.out")" || { bad "--force (exit $rc)"; cat "$t/force.out"; }

# A history from sacct records: 40 jobs on one 8-GPU node, a short and a long kind.
{
	echo "JobID|User|Submit|Start|End|AllocTRES|Comment"
	s=0
	for i in $(seq 1 40); do
		len=$(( i % 3 == 0 ? 5400 : 600 )); g=$(( i % 4 == 0 ? 4 : 2 ))
		sub=$(date -u -d "@$((1767225600 + i * 300))" +%Y-%m-%dT%H:%M:%S)
		st=$(date -u -d "@$((1767225600 + i * 300 + 60))" +%Y-%m-%dT%H:%M:%S)
		en=$(date -u -d "@$((1767225600 + i * 300 + 60 + len))" +%Y-%m-%dT%H:%M:%S)
		model=$([ $((i % 3)) -eq 0 ] && echo "model=bert epochs=6" || echo "")
		echo "$i|u$((i % 5))|$sub|$st|$en|cpu=4,gres/gpu=$g|$model"
	done
	echo "41|u1|2026-01-01T09:00:00|Unknown|Unknown|cpu=4,gres/gpu=2|"
} >"$t/sacct.txt"
"$train" site --sacct "$t/sacct.txt" --cluster 1x8 --jobs 20 --episodes 1 --epochs 1 --iterations 1 --rollouts 2 \
	--ppo-epochs 1 --holdout-fraction 0.25 --out "$t/s.pt" --json "$t/s.json" --quiet >"$t/s.out" 2>&1
rc=$?
if { [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]; } && python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
sys.exit(0 if c["jobs"] == 40 and c["heldout_jobs"] == 10 and c["policies"]["dl2"]["jobs"] == 10 else 1)' "$t/s.json"; then
	ok "site from sacct records: 40 jobs that ran, 10 held out (exit $rc)"
else
	bad "site from sacct (exit $rc)"
	cat "$t/s.out"
fi

# --fine-tune: no warm-up, PPO from the shipped model; the report card judges that model as well.
"$train" site --workload "$pollux/workload-1.csv" "${tiny[@]}" --fine-tune "$top/models/dl2.pt" --force \
	--out "$t/ft.pt" --json "$t/ft.json" >"$t/ft.out" 2>"$t/ft.err"
rc=$?
if [ "$rc" -eq 0 ] && [ -s "$t/ft.pt" ] && grep -q "stage 2/4: .*no warm-up" "$t/ft.err" &&
	! grep -q "^\[sl\]" "$t/ft.err" && grep -q "^\[sl\]" "$t/site.err" && grep -q "^  (from) " "$t/ft.out" &&
	python3 - "$t/ft.json" "$top/models/dl2.pt" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))
f = c["fine_tuned_from"]
assert f["file"] == sys.argv[2] and f["jobs"] == 48, f
best = c["policies"][c["best_heuristic"]]["avg_jct_s"]
assert abs(f["avg_jct_vs_best"] - f["avg_jct_s"] / best) < 1e-6
P
then
	ok "--fine-tune: PPO from the shipped model, no warm-up, judged beside it: $(grep '^  (from) ' "$t/ft.out")"
else
	bad "--fine-tune (exit $rc)"
	cat "$t/ft.out" "$t/ft.err"
fi
echo "not a model" >"$t/junk.pt"
"$train" site --workload "$pollux/workload-1.csv" --cluster 2x8 --fine-tune "$t/junk.pt" --out "$t/x.pt" >"$t/out" 2>"$t/err"
[ $? -eq 1 ] && grep -q "^dlsched-train: --fine-tune $t/junk.pt: " "$t/err" && ! grep -q "stage 1/4" "$t/err" &&
	ok "an unreadable --fine-tune model named before any work" || { bad "bad --fine-tune"; cat "$t/err"; }
"$train" site --workload "$pollux/workload-1.csv" --cluster 2x8 --fine-tune "$top/models/dl2.pt" \
	--init "$top/models/dl2.pt" --out "$t/x.pt" 2>"$t/err"
[ $? -eq 2 ] && grep -q "not both" "$t/err" && ok "--init with --fine-tune refused" || { bad "--init and --fine-tune"; cat "$t/err"; }

# Bad inputs: no cluster, two histories, a history too short to split.
"$train" site --workload "$pollux/workload-1.csv" --out "$t/x.pt" 2>"$t/err"
[ $? -eq 2 ] && grep -q "site needs --cluster SPEC" "$t/err" && ok "site without --cluster" || { bad "no --cluster"; cat "$t/err"; }
"$train" site --workload "$pollux/workload-1.csv" --sacct "$t/sacct.txt" --cluster 2x8 --out "$t/x.pt" 2>"$t/err"
[ $? -eq 2 ] && grep -q "site needs one history" "$t/err" && ok "site with two histories" || { bad "two histories"; cat "$t/err"; }
head -12 "$t/sacct.txt" >"$t/short.txt"
"$train" site --sacct "$t/short.txt" --cluster 1x8 --out "$t/x.pt" 2>"$t/err"
[ $? -eq 1 ] && grep -q "short.txt: 11 jobs, 8 to train on and 3 held out: each part needs at least 10 jobs" "$t/err" \
	&& ok "a short history named" || { bad "short history"; cat "$t/err"; }

echo "test-train-site: $fails failure(s)"
[ "$fails" -eq 0 ]
