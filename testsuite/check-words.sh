#!/bin/sh
# The admin-comment words have one definition, common/include/dlsched/words.h: the C plugins spell
# none of them themselves, and every word dlsched-report reads from AdminComment is defined there.
# Fails listing what is spelled elsewhere or missing.
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}"
words_h="$top/common/include/dlsched/words.h"
report="$top/contribs/report/dlsched-report"
status=0
[ -r "$words_h" ] || { echo "FAIL: $words_h missing"; exit 1; }
# The words, as a tool in another language reads them: #define DLSCHED_WORD_<NAME> "<word>".
words=$(sed -n 's/^#define DLSCHED_WORD_[A-Z_]*[[:space:]]*"\([a-z_]*\)".*/\1/p' "$words_h")
[ "$(printf '%s\n' $words | wc -l)" -ge 6 ] ||
	{ echo "FAIL: $words_h: fewer than 6 words read (the #define form changed?): $words"; exit 1; }
for w in deadline infeasible dl_requested dl_resizes dl_held dl_released; do
	printf '%s\n' $words | grep -qx "$w" || { echo "FAIL: $words_h does not define '$w'"; status=1; }
done
# C: a word as a string literal of its own ("dl_resizes", "deadline=") outside words.h (comments
# may name them).
for w in $words; do
	bad=$(grep -rnE "\"$w=?\"|\"$w=%" "$top/plugins" --include='*.c' --include='*.h' 2>/dev/null |
		grep -vE '^[^:]*:[0-9]+:[[:space:]]*(\*|/\*|//)')
	if [ -n "$bad" ]; then
		echo "FAIL: the plugins spell '$w' themselves (use DLSCHED_WORD_* of dlsched/words.h):"
		echo "$bad"
		status=1
	fi
done
# Python: every AdminComment word dlsched-report reads (parse_admin_time(..., "WORD")) is defined.
if [ -r "$report" ]; then
	read_words=$(grep -oE 'parse_admin_time\(.*"[a-z_]+"\)' "$report" | sed 's/.*"\([a-z_]*\)")$/\1/' | sort -u)
	[ "$(printf "%s\n" $read_words | wc -l)" -ge 3 ] ||
		{ echo "FAIL: fewer than 3 parse_admin_time(..., \"WORD\") found in $report: $read_words"; status=1; }
	for w in $read_words; do
		printf '%s\n' $words | grep -qx "$w" ||
			{ echo "FAIL: dlsched-report reads AdminComment word '$w', which $words_h does not define"; status=1; }
	done
fi
[ $status -eq 0 ] && echo "PASS: admin-comment words defined once ($(echo $words))"
exit $status
