#!/usr/bin/env bash
# dlsched-guard(1) on a recorded history (testsuite/data/guard_sacct.txt, sacct -X -P output of a
# 1x8 cluster), evaluated at 2026-11-23T12:00:00Z with GuardWindow=3600:
#  - jobs=5: 102, 103 (finished), 104 (running), 105 (pending) and 106; not 101 (submitted before the
#    window), 107 (no GPUs), 108 (submitted after the evaluation), nor the step 102.batch;
#  - both replays ran (each average JCT at least the shortest job's 300 s), and the choice is the
#    guard's rule applied to them from GuardPolicy= (learned only when more than GuardMargin= better);
#  - the verdict and state files are written whole, mode 0644, and the state carries to the next run;
#  - GuardMargin=1 keeps the heuristic; a heuristic Policy=, a bad history line, a corrupt state file
#    are errors that name the input.
#  - with a profile DB (testsuite/data/guard_sacct_db.txt): each job at the length the controller
#    knew at the evaluation, records after it unread, the backlog at the window's start (below).
# About 15 s on one core (four replays of five jobs with dl2). Skips without libtorch.
set -uo pipefail
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
build="${abs_top_builddir:-$top/_build}"
guard="$build/contribs/guard/dlsched-guard"
if [ ! -x "$guard" ]; then
	echo "SKIP: dlsched-guard not built (configure found no libtorch)"
	exit 77
fi
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
export DLSCHED_DATADIR="$top/contribs"
hist="$top/testsuite/data/guard_sacct.txt"
now=1795435200 # 2026-11-23T12:00:00Z
conf() {       # conf EXTRA...: a dl2 configuration with a one-hour window
	{
		echo "Policy=dl2"
		echo "ModelFile=$top/models/dl2.pt"
		echo "GuardInterval=1800"
		echo "GuardWindow=3600"
		echo "GuardVerdictFile=$t/verdict"
		for l in "$@"; do echo "$l"; done
	} >"$t/dlsched.conf"
}
val() { sed -n "s/^$1=//p" "$2"; } # val KEY FILE

conf
if "$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >"$t/out" 2>"$t/err"; then
	ok "evaluated: $(cat "$t/out")"
else
	bad "dlsched-guard failed: $(cat "$t/err")"
fi
[ "$(val jobs "$t/verdict")" = 5 ] && ok "5 jobs replayed (finished, running, pending; none from the future)" \
	|| bad "jobs=$(val jobs "$t/verdict") (want 5)"
[ "$(val at "$t/verdict")" = "$now" ] && ok "at=$now" || bad "at=$(val at "$t/verdict")"
learned="$(val learned_jct "$t/verdict")"
heuristic="$(val heuristic_jct "$t/verdict")"
choice="$(val choice "$t/verdict")"
want="$(python3 -c 'import sys; l,h=map(float,sys.argv[1:]); print("learned" if l < h*(1-0.02) else "heuristic")' \
	"$learned" "$heuristic")"
python3 -c 'import sys; l,h=map(float,sys.argv[1:]); sys.exit(0 if l >= 300 and h >= 300 else 1)' "$learned" "$heuristic" \
	&& ok "both replays ran: dl2 ${learned} s, mckp ${heuristic} s" || bad "replays: dl2 ${learned} s, mckp ${heuristic} s"
[ "$choice" = "$want" ] && ok "choice=$choice follows the rule from GuardPolicy=" || bad "choice=$choice, the rule says $want"
[ "$(stat -c %a "$t/verdict")" = 644 ] && [ "$(stat -c %a "$t/verdict.state")" = 644 ] && ok "verdict and state mode 0644" \
	|| bad "modes $(stat -c %a "$t/verdict" "$t/verdict.state")"
[ -z "$(ls "$t" | grep -E 'verdict\..{6}$')" ] && ok "no temporary file left" || bad "left: $(ls "$t")"
[ "$(val evaluations "$t/verdict.state")" = 1 ] && [ "$(val choice "$t/verdict.state")" = "$choice" ] \
	&& ok "state: 1 evaluation, choice=$choice" || bad "state: $(cat "$t/verdict.state")"

# The next run starts from the state: the learned side keeps the cluster unless the heuristic is better.
printf 'choice=learned\nswitches=4\nevaluations=7\nat=%s\n' "$((now - 1800))" >"$t/verdict.state"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >"$t/out2" 2>"$t/err" || bad "second run: $(cat "$t/err")"
want="$(python3 -c 'import sys; l,h=map(float,sys.argv[1:]); print("heuristic" if h < l else "learned")' "$learned" "$heuristic")"
sw=$([ "$want" = heuristic ] && echo 5 || echo 4)
[ "$(val choice "$t/verdict")" = "$want" ] && [ "$(val switches "$t/verdict")" = "$sw" ] && [ "$(val evaluations "$t/verdict.state")" = 8 ] \
	&& ok "from learned: choice=$want, switches=$sw, evaluations=8" || bad "from learned: $(cat "$t/verdict" "$t/verdict.state")"

# GuardMargin=1: the learned policy can never win by 100%.
rm -f "$t/verdict.state"
conf "GuardMargin=1"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >/dev/null 2>"$t/err" \
	&& [ "$(val choice "$t/verdict")" = heuristic ] && ok "GuardMargin=1 keeps the heuristic" || bad "GuardMargin=1: $(cat "$t/verdict" "$t/err")"

# Errors name the input; no verdict is written.
rm -f "$t/verdict" "$t/verdict.state"
conf
sed -i 's/^Policy=dl2/Policy=srtf/' "$t/dlsched.conf"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >/dev/null 2>"$t/err"
[ $? = 1 ] && grep -q "nothing to guard" "$t/err" && [ ! -e "$t/verdict" ] && ok "a heuristic policy: $(cat "$t/err")" \
	|| bad "heuristic policy: $(cat "$t/err")"
conf
{ cat "$hist"; echo "109|yesterday|Unknown|Unknown||gres/gpu=1||x"; } >"$t/bad.txt"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$t/bad.txt" --now "$now" >/dev/null 2>"$t/err"
[ $? = 1 ] && grep -q "bad.txt:11: Submit 'yesterday'" "$t/err" && [ ! -e "$t/verdict" ] && ok "a bad line: $(cat "$t/err")" \
	|| bad "bad line: $(cat "$t/err")"
echo "winner=dl2" >"$t/verdict.state"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$hist" --now "$now" >/dev/null 2>"$t/err"
[ $? = 1 ] && grep -q "verdict.state:1: 'winner=dl2' is not a state line" "$t/err" && ok "a corrupt state file: $(cat "$t/err")" \
	|| bad "corrupt state: $(cat "$t/err")"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --now soon >/dev/null 2>&1
[ $? = 2 ] && ok "--now soon is a usage error" || bad "--now soon"

# ---- What the controller knew (testsuite/data/guard_sacct_db.txt and a profile DB), at 12:00 ----
#  - 201 (pending, cifar10, 10 epochs, 1-day limit): two earlier cifar10 jobs ran 3,000 s epochs, so
#    it is replayed long: 3,000 s per epoch (without the DB: its profile, raised to the limit's
#    floor 86,400 / HintTrustFactor 10 / 10 epochs = 864 s). A third cifar10 job's 30 s epochs were
#    recorded after 12:00: not read (else the history would be far shorter).
#  - 202 (running since 11:40, imagenet): its own epochs 11:40-12:00 (600 s each); three 10 s epochs
#    recorded after 12:00 are not read: 600 s per epoch, not about 10.
#  - 205 ended at 12:30, after the evaluation: running at 12:00, at its time limit (3,600 s on one
#    GPU), not the 2,400 s it ran.
#  - the backlog at the window's start (11:00): 203 (submitted 10:30, ran 10:40-11:20) with 1/2 of
#    its run left (measured 40 min: 20 min left of 1 epoch = 0.5); 204 (running since 10:55,
#    2 epochs of 10 reported by 10:59) with 8 epochs left; both from time 0. 206 ended at 10:45: not
#    replayed.
rm -f "$t/verdict" "$t/verdict.state"
db="$t/profiles.db"
"$build/contribs/db/dlsched-db" --db "$db" init >/dev/null || bad "dlsched-db init"
python3 - "$db" "$now" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1]); now = float(sys.argv[2])
def job(i, model, user, start, epochs):  # epochs: [(start, end)]
    con.execute("INSERT INTO jobs (cluster, job_id, user, model, gpus, epochs_total, submit_s, start_s) "
                "VALUES ('lab', ?, ?, ?, 1, 10, ?, ?)", (i, user, model, start, start))
    for n, (a, b) in enumerate(epochs, 1):
        con.execute("INSERT INTO epochs (cluster, job_id, run, epoch, gpus, start_s, end_s) "
                    "VALUES ('lab', ?, 0, ?, 1, ?, ?)", (i, n, a, b))
run = lambda t0, n, s: [(t0 + k * s, t0 + (k + 1) * s) for k in range(n)]
job(1, "cifar10", "u1", now - 90000, run(now - 90000, 10, 3000))
job(2, "cifar10", "u2", now - 60000, run(now - 60000, 10, 3000))
job(3, "cifar10", "u3", now + 60, run(now + 60, 10, 30))          # after the evaluation
job(202, "imagenet", "bob", now - 1200, run(now - 1200, 2, 600))   # 11:40-12:00
for k, (a, b) in enumerate(run(now + 60, 3, 10), 3):                # epochs 3-5, after it
    con.execute("INSERT INTO epochs (cluster, job_id, run, epoch, gpus, start_s, end_s) "
                "VALUES ('lab', 202, 0, ?, 1, ?, ?)", (k, a, b))
job(204, "imagenet", "dave", now - 3900, run(now - 3900, 2, 120))  # 10:55-10:59
con.commit()
PY
chmod 600 "$db"
conf "ProfileDB=$db"
snap() { awk -F, -v id="$1" -v col="$2" 'NR > 1 && $1 == id { print $col }' "$t/snap.csv"; } # snap ID COLUMN
near() { python3 -c 'import sys; v,w,tol=map(float,sys.argv[1:]); sys.exit(0 if abs(v-w) <= tol*w else 1)' "${1:-0}" "$2" "$3"; }
if "$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$top/testsuite/data/guard_sacct_db.txt" --now "$now" \
	--cluster-name lab --snapshot "$t/snap.csv" >"$t/out" 2>"$t/err" && [ ! -s "$t/err" ]; then
	ok "with ProfileDB=: $(cat "$t/out")"
else
	bad "with ProfileDB=: $(cat "$t/out" "$t/err")"
fi
near "$(snap 201 5)" 3000 0.2 && ok "201: its model's history says long: $(snap 201 5) s per epoch" \
	|| bad "201: $(snap 201 5) s per epoch, want about 3000 (snapshot: $(cat "$t/snap.csv"))"
near "$(snap 202 5)" 600 0.2 && ok "202: its own epoch before the evaluation: $(snap 202 5) s (records after it not read)" \
	|| bad "202: $(snap 202 5) s per epoch, want about 600"
[ "$(snap 205 5)" = 3600 ] && ok "205 (ended after the evaluation): its time limit, 3600 s" || bad "205: $(snap 205 5) (want 3600)"
[ "$(snap 203 2)" = 0 ] && near "$(snap 203 4)" 0.5 0.01 && [ "$(snap 204 2)" = 0 ] && near "$(snap 204 4)" 8 0.01 \
	&& [ -z "$(snap 206 1)" ] && [ "$(val jobs "$t/verdict")" = 5 ] \
	&& ok "the backlog at 11:00: 203 (0.5 of 1 epoch) and 204 (8 of 10 epochs) from time 0; not 206; 5 jobs" \
	|| bad "backlog: $(cat "$t/snap.csv")"
grep -q "2 from before it, 3 estimated from the profile DB" "$t/out" && ok "counted: 2 carried, 3 from the DB (201, 202, 204)" || bad "counts: $(cat "$t/out")"
# Without the DB: the same pending job at its profile, raised to its limit's floor.
conf
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$top/testsuite/data/guard_sacct_db.txt" --now "$now" \
	--cluster-name lab --snapshot "$t/snap.csv" >/dev/null 2>"$t/err" && near "$(snap 201 5)" 864 0.01 \
	&& ok "without ProfileDB=: 201 at 864 s per epoch" || bad "without the DB: 201 $(snap 201 5) $(cat "$t/err")"
# A profile DB every user can write is refused, as sched/dlsched refuses it, and said.
conf "ProfileDB=$db"
chmod 666 "$db"
"$guard" --config "$t/dlsched.conf" --cluster 1x8 --sacct "$top/testsuite/data/guard_sacct_db.txt" --now "$now" \
	--cluster-name lab --snapshot "$t/snap.csv" >/dev/null 2>"$t/err" && grep -q "writable by every user" "$t/err" \
	&& near "$(snap 201 5)" 864 0.01 && ok "a world-writable DB refused: $(head -c 160 "$t/err")" || bad "world-writable DB: $(cat "$t/err")"
chmod 600 "$db"

[ "$fails" -eq 0 ] && echo "PASS" || echo "FAIL: $fails"
[ "$fails" -eq 0 ]
