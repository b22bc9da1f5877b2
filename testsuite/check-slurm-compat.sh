#!/bin/sh
# Slurm releases (doc/admin-guide.md, "Slurm releases"): configure refuses a Slurm source tree of a
# release the plugins do not support, naming the supported ones; and the plugins' glue tests the
# release nowhere but in plugins/common/dlsched_compat* (no #if on the release scattered through it).
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}"
status=0

# 1. No conditional on the release outside the compatibility layer.
release_re='#[[:space:]]*(if|elif|ifdef|ifndef).*(DLS_SLURM_RELEASE|SLURM_VERSION_NUMBER|SLURM_VERSION_NUM\()'
for line in '#if DLS_SLURM_RELEASE >= 2411' '# elif SLURM_VERSION_NUMBER > SLURM_VERSION_NUM(23, 2, 0)' \
	'#ifdef DLS_SLURM_RELEASE'; do
	printf '%s\n' "$line" | grep -qE "$release_re" || { echo "FAIL: the release pattern misses '$line'"; exit 1; }
done
bad=$(grep -rnE "$release_re" "$top/plugins" 2>/dev/null | grep -v '/plugins/common/dlsched_compat[a-z_]*\.[ch]:')
if [ -n "$bad" ]; then
	echo "FAIL: the Slurm release is tested outside plugins/common/dlsched_compat*:"
	echo "$bad"
	status=1
fi

# 2. configure refuses 23.11 (a tree configured as Slurm's configure leaves it: config.h and
# slurm/slurm_version.h in the build directory, slurmctld.h in the source).
[ -x "$top/configure" ] || { echo "SKIP: no $top/configure (run ./bootstrap)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/src/slurmctld" "$tmp/build/slurm" "$tmp/conf"
: >"$tmp/src/src/slurmctld/slurmctld.h"
: >"$tmp/build/config.h"
echo '#define SLURM_VERSION_NUMBER 0x170b0a' >"$tmp/build/slurm/slurm_version.h"
if (cd "$tmp/conf" && "$top/configure" -q --without-torch --with-slurm-source="$tmp/src" \
	--with-slurm-build="$tmp/build" >"$tmp/out" 2>&1); then
	echo "FAIL: configure accepted a Slurm 23.11.10 source tree"
	status=1
elif ! grep -q 'is Slurm 23.11.10; dlsched.s plugins support Slurm 22.05, 24.11 and 26.05' "$tmp/out"; then
	echo "FAIL: configure refused the 23.11.10 tree without naming the supported releases:"
	tail -5 "$tmp/out"
	status=1
fi
[ "$status" -ne 0 ] || echo "PASS: the release is tested only in dlsched_compat*; configure refuses 23.11, naming 22.05, 24.11 and 26.05"
exit $status
