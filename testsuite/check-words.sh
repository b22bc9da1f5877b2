#!/bin/sh
# The admin-comment words have one definition, common/include/dlsched/words.h: the C plugins spell
# none of them themselves, and dlsched-report reads them from it when it runs (DLSCHED_WORDS_H, else
# the source tree's or the installed header).
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
# Python: dlsched-report reads the words from words.h when it runs (word("NAME")); it spells none
# itself, and every NAME it asks for is defined.
if [ -r "$report" ]; then
	bad=$(grep -nE 'parse_admin_time\([^)]*"[a-z_]+"\)' "$report")
	[ -z "$bad" ] || { echo "FAIL: dlsched-report spells admin-comment words itself (use word(\"NAME\")): $bad"; status=1; }
	names=$(grep -oE 'word\("[A-Z_]+"\)' "$report" | sed 's/word("\([A-Z_]*\)")/\1/' | sort -u)
	[ "$(printf "%s\n" $names | wc -l)" -ge 3 ] ||
		{ echo "FAIL: fewer than 3 word(\"NAME\") found in $report: $names"; status=1; }
	for n in $names; do
		grep -qE "^#define DLSCHED_WORD_$n[[:space:]]" "$words_h" ||
			{ echo "FAIL: dlsched-report reads word $n, which $words_h does not define"; status=1; }
	done
	# ... and really reads them there: with the words renamed in a copy of words.h (DLSCHED_WORDS_H),
	# a history written with the new words gives the same figures, and one with the old words none.
	data="$top/testsuite/report/data/sacct.txt"
	if command -v python3 >/dev/null && [ -r "$data" ]; then
		tmp=$(mktemp -d)
		sed -e 's/"deadline"/"due_by"/' -e 's/"infeasible"/"never_by"/' -e 's/"dl_resizes"/"dl_regrows"/' \
			"$words_h" >"$tmp/words.h"
		sed -e 's/deadline=/due_by=/g' -e 's/infeasible=/never_by=/g' -e 's/dl_resizes=/dl_regrows=/g' \
			"$data" >"$tmp/renamed.txt"
		figures() {  # figures FILE [WORDS_H]: deadline jobs, infeasible at submit, resizes
			DLSCHED_WORDS_H="${2:-}" "$report" --from-file "$1" --format json 2>"$tmp/err" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["deadline_jobs"], d["deadlines"]["infeasible_at_submit"], d["resizes"])'
		}
		want=$(figures "$data")
		got=$(figures "$tmp/renamed.txt" "$tmp/words.h")
		old=$(figures "$data" "$tmp/words.h")
		if [ -n "$want" ] && [ "$want" != "0 0 0" ] && [ "$got" = "$want" ] && [ "${old%% *}" = 0 ]; then
			echo "PASS: dlsched-report reads the words from words.h at run time ($want; old words: $old)"
		else
			echo "FAIL: dlsched-report and a renamed words.h: want '$want', got '$got', old words '$old': $(cat "$tmp/err")"
			status=1
		fi
		DLSCHED_WORDS_H="$tmp/none.h" "$report" --from-file "$data" >/dev/null 2>"$tmp/err"
		rc=$?
		if [ $rc -eq 2 ] && grep -q "DLSCHED_WORDS_H" "$tmp/err"; then
			echo "PASS: without words.h dlsched-report says where it looked, exit 2"
		else
			echo "FAIL: without words.h: rc $rc, $(cat "$tmp/err")"
			status=1
		fi
		rm -rf "$tmp"
	fi
fi
[ $status -eq 0 ] && echo "PASS: admin-comment words defined once ($(echo $words))"
exit $status
