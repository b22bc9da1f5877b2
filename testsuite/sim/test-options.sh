#!/usr/bin/env bash
# Command-line options of every tool and script, without a cluster:
#  - a flag given twice is an error naming it, exit 2 (dlsched-sim --set alone repeats, and
#    dlsched-report --profile-db: test-report.sh); flags that exclude each other are both named;
#  - dlsched-sim --print-config refuses what the plugins would refuse (an unknown policy, a key
#    given twice with two values), exit 1;
#  - the C++ tools (dlsched-sim, -train, -ingestd, -db, -replay, -emu-train) parse with one flag
#    table: an unknown option, a value left out, a number out of range or not a number give the
#    same first line in each ("TOOL: --seed -1: give 0 to 2147483647"), exit 2;
#  - every value-taking option of every script in scripts/ and of dlsched-cluster, given last
#    without its value, prints the script's usage and exits 2 (not "unbound variable" from set -u,
#    nor a failed shift), before anything heavy starts. The options are read from the scripts'
#    own option loops, so a new one is checked too.
# Tools not built here (dlsched-train needs libtorch, dlsched-ingestd libmicrohttpd,
# dlsched-collect the plugins) are reported as skipped.
set -u
top="$(cd "${abs_top_srcdir:-$(dirname "$0")/../..}" && pwd)"
build="$(cd "${abs_top_builddir:-$top/_build}" && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "PASS: $*"; }
ko() { echo "FAIL: $*"; fails=$((fails + 1)); }

# refused NAME RC EXPECTED-SUBSTRING COMMAND...: exits RC, one stderr line has the substring.
refused() {
	local name="$1" want_rc="$2" want="$3"
	shift 3
	if [ ! -x "$1" ]; then
		echo "SKIP: $name ($1 not built)"
		return
	fi
	"$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc -eq "$want_rc" ] && grep -qF -- "$want" "$tmp/err"; then
		ok "$name"
	else
		ko "$name: rc $rc (want $want_rc), stderr: $(head -c 400 "$tmp/err")"
	fi
}

sim="$build/contribs/sim/dlsched-sim"
refused "dlsched-sim: --seed twice" 2 "--seed is given twice: give it once" \
	"$sim" run --seed 1 --seed 2 --workload "$top/testsuite/sim/data/two-jobs.csv" --cluster 1x1 --policy fifo
refused "dlsched-sim: --progress and --quiet" 2 "--progress and --quiet exclude each other" \
	"$sim" run --progress --quiet --workload "$top/testsuite/sim/data/two-jobs.csv" --cluster 1x1 --policy fifo
refused "dlsched-sim: --policy and --policies" 2 "--policy and --policies exclude each other" \
	"$sim" compare --policy fifo --policies fifo,srtf --workload "$top/testsuite/sim/data/two-jobs.csv" --cluster 1x1
refused "dlsched-sim: one key twice in --set" 1 "--set Seed=2 conflicts with --set Seed=1" \
	"$sim" --print-config --set Seed=1 --set Seed=2
# --set repeats for different keys.
if "$sim" --print-config --set Seed=3 --set SchedInterval=5 >"$tmp/out" 2>"$tmp/err" &&
	grep -q "^Seed=3" "$tmp/out" && grep -q "^SchedInterval=5" "$tmp/out"; then
	ok "dlsched-sim: --set repeats for different keys"
else
	ko "dlsched-sim: --set repeats for different keys: $(cat "$tmp/err")"
fi
# --print-config: the checks the plugins make when they load the file.
refused "--print-config: unknown policy" 1 "--set: Policy: unknown scheduling policy 'nosuch'" \
	"$sim" --print-config --set Policy=nosuch
refused "--print-config: unknown ordering" 1 "OrderingPolicy: unknown ordering policy 'lifo'" \
	"$sim" --print-config --set OrderingPolicy=lifo
printf 'Policy=srtf\nSchedInterval=5\nPolicy=fifo\n' >"$tmp/dup.conf"
refused "--print-config: a key twice in the file" 1 "$tmp/dup.conf:3: Policy=fifo conflicts with Policy=srtf at $tmp/dup.conf:1" \
	"$sim" --print-config --config "$tmp/dup.conf"
refused "--print-config: unknown key" 1 "unknown key 'Colour'" "$sim" --print-config --set Colour=blue
refused "--print-config: bad value" 1 "SchedInterval: '-5' is out of range" "$sim" --print-config --set SchedInterval=-5

refused "dlsched-db: --db twice" 2 "--db is given twice: give it once" \
	"$build/contribs/db/dlsched-db" --db "$tmp/a.db" --db "$tmp/b.db" version
refused "dlsched-replay: --seed twice" 2 "--seed is given twice: give it once" \
	"$build/contribs/replay/dlsched-replay" --workload x.csv --seed 1 --seed 2
refused "dlsched-emu-train: --model twice" 2 "--model is given twice: give it once" \
	"$build/contribs/replay/dlsched-emu-train" --model bert --model ncf --epochs 1 --epoch-time-1gpu 1
refused "dlsched-emu-train: --checkpoint and --checkpoint-dir" 2 "--checkpoint and --checkpoint-dir exclude each other" \
	"$build/contribs/replay/dlsched-emu-train" --model bert --epochs 1 --epoch-time-1gpu 1 --checkpoint a --checkpoint-dir b
refused "dlsched-train: --seed twice" 2 "--seed is given twice: give it once" \
	"$build/contribs/train/dlsched-train" init --out "$tmp/m.pt" --seed 1 --seed 2
refused "dlsched-ingestd: --db twice (once inline)" 2 "--db is given twice: give it once" \
	"$build/contribs/ingestd/dlsched-ingestd" --db "$tmp/a.db" --db="$tmp/b.db"
refused "dlsched-collect: --job-id twice" 2 "--job-id is given twice: give it once" \
	"$build/plugins/spank/dlsched/collect/dlsched-collect" --job-id 1 --job-id 2
refused "dlsched-progress: --start twice" 2 "--start is given twice: give it once" \
	"$build/contribs/progress/dlsched-progress" epoch 1 --start "$(date +%s)" --start "$(date +%s)"
refused "dlsched-agreement: --workload twice" 2 "--workload is given twice: give it once" \
	"$top/contribs/agreement/dlsched-agreement" --workload a --workload b --cluster 1x1 --policy fifo --speedup 1 --sacct s

# The C++ tools parse with one flag table (common/util/flag_table): an unknown option, a value
# left out and a number out of range read the same in each, first line "TOOL: MESSAGE", exit 2.
# shape NAME BINARY WANT-FIRST-LINE ARGS...
shape() {
	local name="$1" bin="$2" want="$3"
	shift 3
	if [ ! -x "$bin" ]; then
		echo "SKIP: $name ($bin not built)"
		return
	fi
	"$bin" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc -eq 2 ] && [ "$(head -n 1 "$tmp/err")" = "$want" ]; then
		ok "$name"
	else
		ko "$name: rc $rc (want 2), first line: $(head -n 1 "$tmp/err") (want: $want)"
	fi
}
# NAME|BINARY|COMMAND|FLAG|ITS METAVAR|A VALUE OUT OF RANGE|THE RANGE (a number flag: CV; else whole)
tools=(
	"dlsched-sim|$sim|run|--seed|N|-1|give 0 to 2147483647"
	"dlsched-train|$build/contribs/train/dlsched-train|rl|--seed|N|-1|give 0 to 2147483647"
	"dlsched-ingestd|$build/contribs/ingestd/dlsched-ingestd||--max-request|BYTES|5|give 1024 to 16777216"
	"dlsched-db|$build/contribs/db/dlsched-db||--db|FILE||"
	"dlsched-replay|$build/contribs/replay/dlsched-replay||--gpus-per-node|G|0|give 1 to 1048576"
	"dlsched-emu-train|$build/contribs/replay/dlsched-emu-train||--noise|CV|2|give 0 to 1"
)
for t in "${tools[@]}"; do
	IFS='|' read -r name bin cmd flag metavar bad range <<<"$t"
	pre=()
	[ -n "$cmd" ] && pre=("$cmd")
	shape "$name: unknown option" "$bin" "$name: unknown option '--bogus'" "${pre[@]}" --bogus
	shape "$name: no value" "$bin" "$name: $flag needs a value ($metavar)" "${pre[@]}" "$flag"
	[ -z "$bad" ] ||
		shape "$name: out of range" "$bin" "$name: $flag $bad: $range" "${pre[@]}" "$flag" "$bad"
	[ -z "$bad" ] || shape "$name: not a number" "$bin" \
		"$name: $flag 'x1' is not a $([ "$metavar" = CV ] && echo number || echo "whole number")" \
		"${pre[@]}" "$flag" x1
done

# Scripts: each value-taking option (a case branch that reads "$2"), last and without its value.
# The expected usage text is the first line the script's --help prints.
scripts=()
for s in "$top"/scripts/* "$top/contribs/cluster/dlsched-cluster"; do
	[ -f "$s" ] && [ -x "$s" ] && scripts+=("$s")
done
checked=0
for s in "${scripts[@]}"; do
	name="${s#"$top"/}"
	sub=()
	[ "$(basename "$s")" = dlsched-cluster ] && sub=(up)
	opts=$(sed -n 's/^[[:space:]]*\(--[a-z0-9-]*\)\(|[^)]*\)\{0,1\})[[:space:]].*"\$2".*/\1/p' "$s")
	[ -n "$opts" ] || continue
	first=$("$s" "${sub[@]}" --help 2>&1 </dev/null | sed -n '/[^[:space:]]/{p;q;}')
	for o in $opts; do
		checked=$((checked + 1))
		timeout 20 "$s" "${sub[@]}" "$o" </dev/null >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ $rc -eq 2 ] && grep -qF -- "$o needs a value" "$tmp/err" && grep -qF -- "$first" "$tmp/err"; then
			ok "$name $o (no value): usage, exit 2"
		else
			ko "$name $o (no value): rc $rc, stderr: $(head -c 300 "$tmp/err")"
		fi
	done
done
# scripts/ is not in the distribution tarball: there only dlsched-cluster is checked.
if [ -d "$top/scripts" ]; then
	[ "$checked" -ge 20 ] || ko "only $checked script options found: is the pattern still right?"
fi
# ... and an option given twice.
refused "dlsched-cluster --nodes twice" 2 "--nodes is given twice: give it once" \
	"$top/contribs/cluster/dlsched-cluster" up --nodes 1 --nodes 2
# ... and a bad value, before anything starts.
refused "dlsched-cluster --time-scale 0" 1 "--time-scale '0' is not a number in [0.001, 1e6]" \
	"$top/contribs/cluster/dlsched-cluster" up --time-scale 0 --dir "$tmp/cluster"

exit $((fails > 0))
