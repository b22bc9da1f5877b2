#!/usr/bin/env bash
# Every script under scripts/ and contribs/ that a person runs answers --help (and -h) with its own
# usage and does nothing else: exit status 0, a usage text that names the script, nothing installed,
# built or started (apt-get, sudo, make, configure, munge, slurmctld, mariadb, dlsched-sim, ... are
# replaced on PATH by a stand-in that records its call and fails), and no file created in the tree.
# (scripts/run-tests --help used to install packages and then print configure's help.)
set -u
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
for c in apt-get apt dpkg sudo make cmake gcc g++ cc configure autoreconf git curl wget munged mariadbd \
	mysqld slurmctld slurmd slurmdbd sbatch srun scontrol sacctmgr sacct systemctl dlsched-sim dlsched-train \
	python3-venv pip; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\nexit 1\n' "$c" "$tmp" >"$tmp/bin/$c"
	chmod +x "$tmp/bin/$c"
done
fails=0
n=0
snapshot() { (cd "$top" && find . -path ./.git -prune -o -newer "$tmp/stamp" -type f -print 2>/dev/null | grep -v '^\./_' | sort); }
for f in "$top"/scripts/* "$top"/contribs/cluster/dlsched-cluster; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	name=$(basename "$f")
	for opt in --help -h; do
		n=$((n + 1))
		: >"$tmp/calls"
		touch "$tmp/stamp"
		sleep 0.01
		out=$(cd "$tmp" && PATH="$tmp/bin:$PATH" BUILD_DIR="$tmp/nobuild" timeout 20 "$f" $opt 2>&1)
		rc=$?
		made=$(snapshot)
		why=""
		[ $rc -eq 0 ] || why="exit status $rc"
		printf '%s' "$out" | grep -qi "$name\|usage" || why="${why:+$why; }its output does not name it nor say usage"
		[ -s "$tmp/calls" ] && why="${why:+$why; }it ran: $(tr '\n' ';' <"$tmp/calls")"
		[ -n "$made" ] && why="${why:+$why; }it made files: $(echo $made)"
		[ -e "$tmp/nobuild" ] && why="${why:+$why; }it made BUILD_DIR" && rm -rf "$tmp/nobuild"
		if [ -z "$why" ]; then
			echo "ok $n - $name $opt"
		else
			echo "not ok $n - $name $opt: $why"
			fails=$((fails + 1))
		fi
	done
done
echo "1..$n"
[ "$n" -gt 0 ] || { echo "Bail out! no scripts found under $top/scripts"; exit 99; }
[ $fails -eq 0 ] && echo "PASS: all $n answers were usage only" || echo "FAIL: $fails of $n"
exit $((fails > 0))
