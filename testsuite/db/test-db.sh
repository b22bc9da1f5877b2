#!/bin/sh
# dlsched-db on a real profile database: init creates it, rows added through SQLite (Python's
# sqlite3) show in models/job/export, an older schema is upgraded by init, and bad files or
# arguments are errors that name them.
set -u
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
build="${abs_top_builddir:-$top/_build}"
db="$build/contribs/db/dlsched-db"
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "PASS: $*"; }
ko() { echo "FAIL: $*"; fails=$((fails + 1)); }
f="$tmp/p.db"

"$db" --db "$f" init >"$tmp/out" 2>&1 && grep -q "schema version 5 (ready)" "$tmp/out" && ok "init creates the database" ||
	ko "init: $(cat "$tmp/out")"
"$py" - "$f" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO jobs (job_id, user, model, gpus, epochs_total, state) VALUES (41, 'alice', 'cifar10', 2, 3, 'completed')")
c.execute("INSERT INTO jobs (job_id, user, model, gpus, epochs_total, state) VALUES (42, 'bob', 'cifar10', 1, 3, 'running')")
for e, (s, t) in enumerate([(0, 12.5), (12.5, 22.5), (22.5, 32.5)], 1):
    c.execute("INSERT INTO epochs (job_id, run, epoch, gpus, start_s, end_s, bytes_read) VALUES (41, 0, ?, 2, ?, ?, ?)", (e, s, t, 5000 * e))
c.execute("INSERT INTO epochs (job_id, run, epoch, gpus, start_s, end_s) VALUES (42, 0, 1, 1, 0, 20)")
c.execute("INSERT INTO checkpoints (job_id, run, epoch, kind, bytes, seconds, at_s) VALUES (41, 0, 2, 'save', 94371840, 0.75, 23)")
c.commit()
PY
"$db" --db "$f" models >"$tmp/out" 2>&1 && grep -Eq '^cifar10 +2$' "$tmp/out" && ok "models: cifar10 with 2 jobs" ||
	ko "models: $(cat "$tmp/out")"
"$db" --db "$f" job 41 >"$tmp/out" 2>&1 && grep -q "job 41: model cifar10, user alice, 2 GPU(s) on 1 node(s), 3 epochs, state completed" "$tmp/out" &&
	grep -Eq '^ +2 +0 +2 +10.000 +10000 +-1 +-1$' "$tmp/out" && grep -Eq '^ +save +0 +2.000 +94371840 +0.750$' "$tmp/out" &&
	ok "job: record, epochs and checkpoint" || ko "job: $(cat "$tmp/out")"
"$db" --db "$f" export epochs >"$tmp/out" 2>&1 && [ "$(wc -l <"$tmp/out")" -eq 5 ] &&
	[ "$(sed -n 3p "$tmp/out")" = ",41,0,2,2,12.5,22.5,10000,-1,-1," ] && ok "export epochs as CSV" || ko "export: $(cat "$tmp/out")"
DLSCHED_PROFILE_DB="$f" "$db" version >"$tmp/out" 2>&1 && grep -q "schema version 5; this dlsched writes version 5" "$tmp/out" &&
	ok "version (DLSCHED_PROFILE_DB)" || ko "version: $(cat "$tmp/out")"
"$db" --db "$f" vacuum >"$tmp/out" 2>&1 && "$db" --db "$f" check >"$tmp/out" 2>&1 && ok "vacuum, then check" || ko "vacuum/check: $(cat "$tmp/out")"
# backup: a copy that is itself a profile DB with the same rows, taken while a writer holds an open
# transaction with rows not yet committed (they are not in the copy); an existing target is refused.
"$py" - "$f" "$db" "$tmp/copy.db" >"$tmp/out" 2>&1 <<'PY'
import sqlite3, subprocess, sys
w = sqlite3.connect(sys.argv[1], isolation_level=None)
w.execute("BEGIN IMMEDIATE")
w.execute("INSERT INTO jobs (job_id, user, model, gpus, epochs_total, state) VALUES (43, 'carol', 'bert', 1, 1, 'running')")
r = subprocess.run([sys.argv[2], "--db", sys.argv[1], "backup", sys.argv[3]], capture_output=True, text=True)
print(r.stdout + r.stderr)
w.execute("COMMIT")
sys.exit(r.returncode)
PY
[ $? -eq 0 ] && grep -q "copied to $tmp/copy.db (schema version 5)" "$tmp/out" &&
	"$db" --db "$tmp/copy.db" check >/dev/null 2>&1 &&
	[ "$("$db" --db "$tmp/copy.db" export jobs | wc -l)" -eq 3 ] && [ "$("$db" --db "$f" export jobs | wc -l)" -eq 4 ] &&
	"$db" --db "$tmp/copy.db" export epochs >"$tmp/e1" && "$db" --db "$f" export epochs >"$tmp/e2" && cmp -s "$tmp/e1" "$tmp/e2" &&
	ok "backup: a consistent copy beside an open write transaction" || ko "backup: $(cat "$tmp/out")"
"$db" --db "$f" backup "$tmp/copy.db" >"$tmp/out" 2>&1
[ $? -eq 1 ] && grep -q "backup: $tmp/copy.db exists; give a new file name" "$tmp/out" && ok "backup refuses an existing file" ||
	ko "backup over an existing file: $(cat "$tmp/out")"

# An older schema (version 1: no experience table) is upgraded by init, its rows kept.
old="$tmp/old.db"
"$py" - "$old" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""
CREATE TABLE jobs (cluster TEXT NOT NULL DEFAULT '', job_id INTEGER NOT NULL, user TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '', gpus INTEGER NOT NULL, nodes INTEGER NOT NULL DEFAULT 1, epochs_total REAL NOT NULL DEFAULT 0,
  submit_s REAL NOT NULL DEFAULT 0, start_s REAL NOT NULL DEFAULT 0, end_s REAL NOT NULL DEFAULT 0, state TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (cluster, job_id));
CREATE TABLE epochs (cluster TEXT NOT NULL DEFAULT '', job_id INTEGER NOT NULL, run INTEGER NOT NULL, epoch INTEGER NOT NULL,
  gpus INTEGER NOT NULL, start_s REAL NOT NULL, end_s REAL NOT NULL, bytes_read INTEGER NOT NULL DEFAULT -1,
  net_rx_bytes INTEGER NOT NULL DEFAULT -1, nfs_read_bytes INTEGER NOT NULL DEFAULT -1, PRIMARY KEY (cluster, job_id, epoch));
CREATE TABLE checkpoints (cluster TEXT NOT NULL DEFAULT '', job_id INTEGER NOT NULL, run INTEGER NOT NULL, epoch REAL NOT NULL,
  kind TEXT NOT NULL, bytes INTEGER NOT NULL, seconds REAL NOT NULL, at_s REAL NOT NULL);
INSERT INTO jobs (job_id, model, gpus) VALUES (7, 'bert', 8);
INSERT INTO epochs (job_id, run, epoch, gpus, start_s, end_s) VALUES (7, 0, 1, 8, 0, 100);
PRAGMA application_id = 1684829027;
PRAGMA user_version = 1;
""")
c.commit()
PY
"$db" --db "$old" version >"$tmp/out" 2>&1 && grep -q "schema version 1; this dlsched writes version 5 (dlsched-db init upgrades it)" "$tmp/out" &&
	"$db" --db "$old" init >/dev/null 2>&1 && "$db" --db "$old" version 2>&1 | grep -q "schema version 5;" &&
	"$db" --db "$old" models 2>&1 | grep -Eq '^bert +1$' && ok "init upgrades version 1, keeping its rows" ||
	ko "upgrade: $(cat "$tmp/out")"

# Bad input: exit 1 (bad file) or 2 (bad arguments), a message naming it.
printf 'this is not a database, just text that is long enough to look like a header..........' >"$tmp/bad.db"
"$db" --db "$tmp/bad.db" models >"$tmp/out" 2>&1
[ $? -eq 1 ] && grep -q "$tmp/bad.db: not a readable dlsched profile database" "$tmp/out" && ok "corrupt file named" ||
	ko "corrupt: $(cat "$tmp/out")"
"$db" --db "$tmp/none.db" models >"$tmp/out" 2>&1
[ $? -eq 1 ] && grep -q "$tmp/none.db: no profile database there" "$tmp/out" && ok "missing file named" || ko "missing: $(cat "$tmp/out")"
"$db" --db "$f" job x >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "job ID 'x' is not a job id" "$tmp/out" && ok "bad job id" || ko "bad job id: $(cat "$tmp/out")"
"$db" --db "$f" job 99 >"$tmp/out" 2>&1
[ $? -eq 1 ] && grep -q "no job 99" "$tmp/out" && ok "unknown job" || ko "unknown job: $(cat "$tmp/out")"
"$db" --db "$f" export passwords >"$tmp/out" 2>&1
[ $? -eq 1 ] && grep -q "unknown table 'passwords' (known: jobs, epochs, checkpoints, preemptions)" "$tmp/out" && ok "unknown table" ||
	ko "unknown table: $(cat "$tmp/out")"
"$db" --db "$f" frobnicate >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "unknown command 'frobnicate'" "$tmp/out" && ok "unknown command" || ko "unknown command: $(cat "$tmp/out")"
echo "db: $fails failure(s)"
[ $fails -eq 0 ]
