#!/usr/bin/env bash
# scripts/get-slurm-source --tarball FILE reads the release from the tree's META, not from the name of
# its top directory: SchedMD's tarballs hold slurm-24.11.5/, GitHub's tags and Debian's orig tarball
# of 24.11 slurm-slurm-24-11-5-1/ (which it used to refuse). Both are unpacked as slurm-24.11.5 and
# configured; a tarball of another release, or one without META, is refused with a message naming
# what it holds. The tarballs are tiny fakes (META and a configure that writes the two generated
# headers), so nothing is downloaded or built (about 1 s). Then the Debian path where the mirror does
# not serve the source: SchedMD's tarball instead, or a clear refusal.
set -u
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}"
gss="$top/scripts/get-slurm-source"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
ko() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else ko "$1"; fi; }

# fake_tarball FILE TOPDIR VERSION: a Slurm-like tree (VERSION empty: no META).
fake_tarball() {
	local d="$tmp/t/$2"
	rm -rf "$tmp/t"
	mkdir -p "$d/src/slurmctld"
	: >"$d/src/slurmctld/slurmctld.h"
	[ -z "$3" ] || printf '##\n# Metadata\n##\n  Meta:\t\t1\n  Name:\t\tslurm\n  Version:\t%s\n  Release:\t1\n' \
		"$3" >"$d/META"
	cat >"$d/configure" <<'EOF'
#!/bin/sh
# Stands in for Slurm's configure: records its options, writes the two generated headers.
v=$(sed -n 's/^ *Version:[[:space:]]*//p' "$(dirname "$0")/META")
echo "$*" >configure.args
mkdir -p slurm
echo "#define SLURM_VERSION_STRING \"$v\"" >config.h
echo "#define SLURM_VERSION_NUMBER 0" >slurm/slurm_version.h
EOF
	chmod +x "$d/configure"
	tar -czf "$1" -C "$tmp/t" "$2"
}

# 1. GitHub's / Debian's naming (slurm-slurm-24-11-5-1/), as Debian's orig tarball of 24.11.5.
fake_tarball "$tmp/slurm-wlm_24.11.5.orig.tar.gz" slurm-slurm-24-11-5-1 24.11.5
out=$("$gss" --release 24.11 --tarball "$tmp/slurm-wlm_24.11.5.orig.tar.gz" --prefix "$tmp/prefix" "$tmp/d1" 2>"$tmp/err")
rc=$?
check "a tag-named tarball (slurm-slurm-24-11-5-1/) of 24.11.5 is accepted (rc $rc: $(tr '\n' ' ' <"$tmp/err"))" \
	'[ $rc -eq 0 ]'
check "it is unpacked as slurm-24.11.5 and its configure ran for the prefix" \
	'[ -f "$tmp/d1/slurm-24.11.5/META" ] && grep -q -- "--prefix=$tmp/prefix" "$tmp/d1/build/configure.args"'
check "the last line gives dlsched's configure options ('$(tail -n1 <<<"$out")')" \
	'[ "$(tail -n1 <<<"$out")" = "--with-slurm-source=$tmp/d1/slurm-24.11.5 --with-slurm-build=$tmp/d1/build" ]'
check "no unpacking directory is left behind" '[ -z "$(ls -A "$tmp/d1" | grep unpacking)" ]'

# 2. SchedMD's naming (slurm-24.11.5/).
fake_tarball "$tmp/slurm-24.11.5.tar.gz" slurm-24.11.5 24.11.5
out=$("$gss" --release 24.11 --tarball "$tmp/slurm-24.11.5.tar.gz" "$tmp/d2" 2>"$tmp/err")
rc=$?
check "SchedMD's naming (slurm-24.11.5/) is accepted (rc $rc)" \
	'[ $rc -eq 0 ] && [ "$(tail -n1 <<<"$out")" = "--with-slurm-source=$tmp/d2/slurm-24.11.5 --with-slurm-build=$tmp/d2/build" ]'

# 3. Another release than --release: refused, naming the release it holds; nothing unpacked.
fake_tarball "$tmp/slurm-26.05.3.tar.gz" slurm-slurm-26-05-3-1 26.05.3
"$gss" --release 24.11 --tarball "$tmp/slurm-26.05.3.tar.gz" "$tmp/d3" >/dev/null 2>"$tmp/err"
rc=$?
check "a 26.05.3 tarball is refused for --release 24.11 (rc $rc)" '[ $rc -ne 0 ]'
check "the message names the release it holds and --release ($(tr '\n' ' ' <"$tmp/err"))" \
	'grep -q "holds Slurm 26.05.3 (its META), not a Slurm 24.11 release; pass --release 26.05" "$tmp/err"'
check "nothing was unpacked" '[ -z "$(ls -A "$tmp/d3")" ]'

# 4. A directory named like Slurm 24.11 without META: refused (the name alone is no proof).
fake_tarball "$tmp/slurm-24.11.9.tar.gz" slurm-24.11.9 ""
"$gss" --release 24.11 --tarball "$tmp/slurm-24.11.9.tar.gz" "$tmp/d4" >/dev/null 2>"$tmp/err"
rc=$?
check "a tree without META is refused, saying so (rc $rc: $(tr '\n' ' ' <"$tmp/err"))" \
	'[ $rc -ne 0 ] && grep -q "without a META file" "$tmp/err"'

# 5. Not a tar archive.
echo "not a tarball" >"$tmp/junk.tar.gz"
"$gss" --release 24.11 --tarball "$tmp/junk.tar.gz" "$tmp/d5" >/dev/null 2>"$tmp/err"
rc=$?
check "a file that is not a tar archive is refused, naming it (rc $rc)" \
	'[ $rc -ne 0 ] && grep -q "junk.tar.gz" "$tmp/err"'

# 6. Debian's archive lists sid's slurm-wlm but does not serve its files (this machine's mirror, and
# CI's): SchedMD's tarball of the same upstream release is used. apt and curl are stand-ins (a mirror
# that lists what it does not serve cannot be caused otherwise); curl serves only file:// URLs.
mkdir -p "$tmp/bin" "$tmp/schedmd"
cat >"$tmp/bin/apt-cache" <<'EOF'
#!/bin/sh
echo "Package: slurm-wlm"; echo "Version: 26.05.5-1"
EOF
cat >"$tmp/bin/apt-get" <<'EOF'
#!/bin/sh
case "$*" in
*--print-uris*)
	echo "'http://deb.debian.org/debian/pool/main/s/slurm-wlm/slurm-wlm_26.05.5-1.dsc' slurm-wlm_26.05.5-1.dsc 1 SHA256:0"
	echo "'http://deb.debian.org/debian/pool/main/s/slurm-wlm/slurm-wlm_26.05.5.orig.tar.bz2' slurm-wlm_26.05.5.orig.tar.bz2 1 SHA256:0"
	echo "'http://deb.debian.org/debian/pool/main/s/slurm-wlm/slurm-wlm_26.05.5-1.debian.tar.xz' slurm-wlm_26.05.5-1.debian.tar.xz 1 SHA256:0" ;;
*source*) echo "E: Failed to fetch slurm-wlm_26.05.5-1.dsc  404  Not Found"; exit 100 ;;
esac
EOF
cat >"$tmp/bin/curl" <<'EOF'
#!/bin/sh
out="" url=""
while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift 2 ;; -*) shift ;; *) url="$1"; shift ;; esac; done
echo "$url" >>"$(dirname "$0")/curl.log"
case "$url" in file://*) cp "${url#file://}" "$out" ;; *) echo "curl: (22) 404" >&2; exit 22 ;; esac
EOF
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/dpkg-source"
chmod +x "$tmp/bin/"*
fake_tarball "$tmp/schedmd/slurm-26.05.5.tar.gz" slurm-26.05.5 26.05.5
gzip -dc "$tmp/schedmd/slurm-26.05.5.tar.gz" | bzip2 >"$tmp/schedmd/slurm-26.05.5.tar.bz2"
out=$(cd "$tmp" && PATH="$tmp/bin:$PATH" DLSCHED_SCHEDMD_URL="file://$tmp/schedmd" \
	"$gss" --release 26.05 "$tmp/d6" 2>"$tmp/err")
rc=$?
check "sid's pool not served: SchedMD's tarball of 26.05.5 is used (rc $rc: $(tr '\n' ' ' <"$tmp/err"))" \
	'[ $rc -eq 0 ] && grep -q "trying SchedMD" "$tmp/err" && grep -qx "file://$tmp/schedmd/slurm-26.05.5.tar.bz2" "$tmp/bin/curl.log"'
check "Debian's orig was tried first, and the tree is configured ('$(tail -n1 <<<"$out")')" \
	'[ "$(head -n1 "$tmp/bin/curl.log")" = "http://deb.debian.org/debian/pool/main/s/slurm-wlm/slurm-wlm_26.05.5.orig.tar.bz2" ] &&
	 [ "$(tail -n1 <<<"$out")" = "--with-slurm-source=$tmp/d6/slurm-wlm-26.05.5 --with-slurm-build=$tmp/d6/build" ] &&
	 [ -f "$tmp/d6/slurm-wlm-26.05.5/META" ]'

# 7. Neither serves it: the error names both and the way out (ci-slurm-smoke --release auto reads
# "could not download" to fall back to 24.11).
rm -f "$tmp/schedmd/slurm-26.05.5.tar.bz2" "$tmp/bin/curl.log"
(cd "$tmp" && PATH="$tmp/bin:$PATH" DLSCHED_SCHEDMD_URL="file://$tmp/schedmd" \
	"$gss" --release 26.05 "$tmp/d7" >/dev/null 2>"$tmp/err")
rc=$?
check "neither Debian nor SchedMD serves it: refused, naming both and --tarball (rc $rc)" \
	'[ $rc -ne 0 ] && grep -q "^get-slurm-source: could not download slurm-wlm 26.05.5-1 from Debian.*nor SchedMD.*--tarball FILE" "$tmp/err"'

echo "1..$n"
[ "$fails" -eq 0 ]
