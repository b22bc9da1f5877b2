#!/usr/bin/env bash
# scripts/slurm-testsuite end to end, in stock mode on a real local cluster (about 45 s): bad
# arguments are refused with the usage; Slurm's expect test1.1 and python job-array test pass and
# show as PASS in the table; a test cut off by --timeout shows as FAIL ("timed out") and the run
# exits 1; the Slurm source is not written to. The full comparison of both modes is the script
# itself (doc/slurm-testsuite.md, about 40 minutes). Skips (77) without root, Slurm, expect,
# pytest or Slurm's source (scripts/get-slurm-source).
set -u
top="$(cd "${srcdir:-.}" && pwd)"
script="$top/scripts/slurm-testsuite"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
	{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
command -v expect >/dev/null && /usr/bin/python3 -c 'import pytest' 2>/dev/null ||
	{ echo "SKIP: expect or python3-pytest missing (scripts/install-deps --slurm-tests)"; exit 77; }
# The tests of the release that runs: Debian's 22.05 source, or with DLSCHED_SLURM_PREFIX (scripts/run-tests
# --slurm RELEASE) the source scripts/build-slurm unpacked beside the prefix, else the testsuite-RELEASE
# tree beside it (26.05's release branch has no testsuite; doc/slurm-testsuite.md).
src=""
if [ -n "${DLSCHED_SLURM_PREFIX:-}" ]; then
	release="$("$DLSCHED_SLURM_PREFIX/sbin/slurmctld" -V | awk '{ print $2 }')" release="${release%.*}"
	for d in "$(dirname "$DLSCHED_SLURM_PREFIX")"/slurm-* "$(dirname "$DLSCHED_SLURM_PREFIX")/testsuite-$release"; do
		[ -f "$d/testsuite/expect/globals" ] && { src="$d"; break; }
	done
	[ -n "$src" ] || { echo "SKIP: no testsuite of Slurm $release beside $DLSCHED_SLURM_PREFIX (doc/slurm-testsuite.md)"; exit 77; }
else
	for d in "$top"/_slurm-src/slurm-wlm-* "$top"/slurm-src/slurm-wlm-*; do
		[ -f "$d/testsuite/expect/globals" ] && { src="$d"; break; }
	done
	[ -n "$src" ] || { echo "SKIP: no Slurm source (scripts/get-slurm-source $top/_slurm-src)"; exit 77; }
fi
# Tests later releases renamed (test1.1 is python test_116_47 since 25.05; the job-array test is
# test_122_1); 26.05's python tests need serializer/json and data_parser, which a Slurm built
# without json-c (before scripts/build-slurm built them) lacks.
quick=test1.1 pyt=python/features/job_arrays/test_basics.py
[ -f "$src/testsuite/expect/$quick" ] || quick=test1.2
[ -f "$src/testsuite/python/tests/${pyt#python/}" ] || pyt=python/test_122_1.py
if grep -q 'show nodes --json' "$src/testsuite/python/lib/atf.py" && [ -n "${DLSCHED_SLURM_PREFIX:-}" ] &&
	{ [ ! -f "$DLSCHED_SLURM_PREFIX/lib/slurm/serializer_json.so" ] ||
		! ls "$DLSCHED_SLURM_PREFIX"/lib/slurm/data_parser_v*.so >/dev/null 2>&1; }; then pyt=""; fi

fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
dir="$(mktemp -d /tmp/dlsched-slurm-testsuite-test.XXXXXX)"
trap 'rm -rf "$dir"' EXIT

# Bad arguments: exit 2, a message naming the argument, then the usage.
check_bad() {  # check_bad WHAT EXPECTED_MESSAGE ARGS...
	local what="$1" msg="$2" rc=0
	shift 2
	"$script" "$@" >"$dir/out" 2>&1 || rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$msg" "$dir/out"; then ok "$what: exit 2, '$msg'"; else
		ko "$what: exit $rc, expected 2 and '$msg'"; cat "$dir/out"; fi
}
check_bad "bad --mode" "--mode 'foo' must be stock, dlsched or both" --mode foo
check_bad "missing --tests value" "--tests needs a value" --tests
check_bad "unknown option" "unknown option '--bogus'" --bogus
check_bad "unknown test" "'test99.99' is neither an expect test" --mode stock --tests test99.99
check_bad "bad --nodes" "--nodes 'x' must be a whole number" --nodes x
# Release checks: a source of another release than the daemons' is refused, naming both versions;
# a --slurm-prefix without daemons is refused.
daemons="$(slurmctld -V | awk '{ print $2 }')"
mkdir -p "$dir/other-src/testsuite/expect" "$dir/other-src/testsuite/python/lib"
printf '  Version:\t99.1.2\n' >"$dir/other-src/META"
touch "$dir/other-src/testsuite/expect/globals" "$dir/other-src/testsuite/python/lib/atf.py"
check_bad "source of another release" "--slurm-source $dir/other-src is Slurm 99.1.2, but the daemons ($(command -v slurmctld)) are Slurm $daemons" \
	--mode stock --slurm-source "$dir/other-src"
check_bad "prefix without daemons" "--slurm-prefix $dir: no sbin/slurmctld" --mode stock --slurm-prefix "$dir"
"$script" --mode foo 2>&1 | grep -q '^Runs a subset of Slurm' && ok "usage printed after a bad argument" ||
	ko "no usage after a bad argument"
"$script" --list | grep -qx 'test3.8' && ok "--list names the requeue test test3.8" || ko "--list lacks test3.8"

# A real run: two tests that pass, and test3.8 (about 4 minutes) cut off after 30 s.
stamp="$dir/stamp"
touch "$stamp"
rc=0
"$script" --mode stock --dir "$dir/run" --timeout 30 \
	--tests "expect/$quick,$pyt test3.8" >"$dir/run.out" 2>&1 || rc=$?
row() { grep -E "^$1 +\\| " "$dir/run.out" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }'; }
[ "$(row expect/$quick)" = PASS ] && ok "expect $quick: PASS" || ko "expect $quick: '$(row expect/$quick)'"
if [ -n "$pyt" ]; then
	[ "$(row "$pyt")" = PASS ] && ok "python job-array test: PASS" || ko "python job-array test: '$(row "$pyt")'"
else
	echo "ok - python job-array test # SKIP no serializer/json in $DLSCHED_SLURM_PREFIX"
fi
[ "$(row expect/test3.8)" = FAIL ] && grep -q 'expect/test3.8 (stock) FAIL: timed out after 30s' "$dir/run.out" &&
	ok "test3.8 cut off by --timeout: FAIL, timed out" || ko "test3.8 not reported as timed out"
grep -qx "slurm-testsuite: $([ -n "$pyt" ] && echo 2 || echo 1) passed, 1 failed, 0 skipped" "$dir/run.out" && ok "summary line" || ko "summary line"
[ $rc -eq 1 ] && ok "exit 1 with a failure" || ko "exit $rc with a failure (expected 1)"
[ -f "$dir/run/stock/logs/expect_$quick.log" ] && grep -q '^SUCCESS' "$dir/run/stock/logs/expect_$quick.log" &&
	ok "$quick's log kept" || ko "no log of $quick"
written="$(find "$src/testsuite" -newer "$stamp" -not -type d | head -n3)"
[ -z "$written" ] && ok "Slurm's source untouched" || ko "files written into Slurm's source: $written"
pgrep -f "slurmctld -f $dir/run/" >/dev/null && ko "the cluster is still running" || ok "the cluster was taken down"
[ $fails -eq 0 ] || { echo "--- output of the run:"; cat "$dir/run.out"; }
exit $((fails > 0))
