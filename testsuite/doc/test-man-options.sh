#!/usr/bin/env bash
# For every tool with a man page in doc/man (sections 1 and 8), the options its --help lists and
# the options its man page's OPTIONS section describes are the same set.
#  - --help lists an option when it is in the usage paragraph (the text up to the first blank
#    line), in brackets ("[--json]", "[--a X | --b Y]"), or at the head of an option line
#    ("  -v, --verbose   ..."). Options of other programs quoted in prose ("sacct --starttime")
#    are none of these.
#  - The man page describes an option when it is in the tag of an item (.TP's next line, .IP's
#    argument) of its OPTIONS section.
# -h and --help are left out (every tool has them; man pages need not list them). A tool that was
# not built here (dlsched-ingestd without libmicrohttpd, dlsched-train without libtorch) is skipped
# and said so; with none to check, the test skips (77).
set -u
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
build="${abs_top_builddir:-$top/_build}"
fails=0
checked=0

# The options of a --help text on standard input, one per line.
help_options() {
	awk '
	function take(s,    t) {
		while (match(s, /(^|[^A-Za-z0-9_-])--?[A-Za-z][A-Za-z0-9-]*/) && RLENGTH > 0) {
			t = substr(s, RSTART, RLENGTH)
			sub(/^[^-]/, "", t)
			print t
			s = substr(s, RSTART + RLENGTH)
		}
	}
	function bracketed(s,    group) {
		# every [...] group: the options in it
		while (match(s, /\[[^\[\]]*\]/) && RLENGTH > 0) {
			group = substr(s, RSTART, RLENGTH)
			s = substr(s, RSTART + RLENGTH)
			take(group)
		}
	}
	BEGIN { usage = 1 }
	/^[[:space:]]*$/ { if (seen) usage = 0; next }
	{ seen = 1 }
	usage { take($0); next }
	{ bracketed($0) }
	/^[[:space:]]+-/ {
		# an option line: its head is the options before the description (two spaces or more)
		head = $0
		sub(/^[[:space:]]+/, "", head)
		sub(/  .*/, "", head)
		take(head)
	}' | grep -vx -e '-h' -e '--help' | sort -u
}

# The options in the item tags of a man page's OPTIONS section, one per line.
man_options() {  # man_options FILE
	awk '
	/^\.SH/ { inopts = ($0 ~ /^\.SH +"?OPTIONS"?[[:space:]]*$/); next }
	!inopts { next }
	tag { tag = 0; print; next }
	/^\.TP/ { tag = 1; next }
	/^\.IP/ { print; next }' "$1" |
		sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(em//g' |
		grep -oE '(^|[^A-Za-z0-9_-])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[^-]//' |
		grep -vx -e '-h' -e '--help' | sort -u
}

# Where a tool is: built programs in the build tree, scripts in the source tree.
find_tool() {  # find_tool NAME
	local d
	for d in "$build"/contribs/* "$top"/contribs/*; do
		[ -x "$d/$1" ] && [ -f "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	return 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for page in "$top"/doc/man/*.1 "$top"/doc/man/*.8; do
	name="$(basename "$page")"
	name="${name%.*}"
	if ! tool="$(find_tool "$name")"; then
		echo "SKIP: $name not built here"
		continue
	fi
	if ! "$tool" --help >"$tmp/help" 2>&1; then
		echo "FAIL: $name --help exits non-zero: $(head -3 "$tmp/help")"
		fails=$((fails + 1))
		continue
	fi
	help_options <"$tmp/help" >"$tmp/h"
	man_options "$page" >"$tmp/m"
	checked=$((checked + 1))
	if cmp -s "$tmp/h" "$tmp/m"; then
		echo "PASS: $name: $(wc -l <"$tmp/h") options in --help and in $(basename "$page")'s OPTIONS"
	else
		fails=$((fails + 1))
		echo "FAIL: $name: --help and $(basename "$page")'s OPTIONS differ:"
		comm -23 "$tmp/h" "$tmp/m" | sed 's/^/  only in --help: /'
		comm -13 "$tmp/h" "$tmp/m" | sed 's/^/  only in the man page: /'
	fi
done
[ "$checked" -gt 0 ] || { echo "SKIP: no tool with a man page is built"; exit 77; }
echo "$checked tools checked, $fails failed"
[ "$fails" -eq 0 ]
