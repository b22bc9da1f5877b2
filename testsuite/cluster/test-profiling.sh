#!/usr/bin/env bash
# Job profiling end to end on a real local cluster (dlsched-cluster, dlsched mode): spank/dlsched's
# collector on the nodes, dlsched-ingestd beside slurmctld, the SQLite profile DB.
#  - a job's epochs, storage traffic and checkpoints land in the DB, with the right counts;
#  - an unauthenticated record and one from a uid that does not own the job are refused, and counted;
#  - dlsched-ingestd stopped mid-run and restarted: nothing is lost (the collector spools);
#  - a job asked to checkpoint is requeued and resumes without repeating or skipping an epoch;
#  - owner lookups through the real squeue and sacct: the negative cache for unknown jobs, and
#    503 (not 403) while slurmctld cannot be reached.
# Skips (77) without root, Slurm/munge/MariaDB, the plugins, the collector or dlsched-ingestd.
set -u
top="${srcdir:-.}"
top="$(cd "$top" && pwd)"
build="$(pwd)"
tool="$top/contribs/cluster/dlsched-cluster"
emu="$build/contribs/replay/dlsched-emu-train"
dbtool="$build/contribs/db/dlsched-db"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to start a local cluster"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null ||
	{ echo "SKIP: Slurm, munge or MariaDB missing (scripts/install-deps --slurm)"; exit 77; }
ingestd="$build/contribs/ingestd/dlsched-ingestd"
for f in plugins/lib/sched_dlsched.so plugins/lib/spank_dlsched.so plugins/lib/dlsched-collect contribs/ingestd/dlsched-ingestd; do
	[ -e "$build/$f" ] ||
		{ echo "SKIP: $f not built (configure --with-slurm-source, libcurl, munge, libmicrohttpd; scripts/run-tests does it)"; exit 77; }
done
command -v curl >/dev/null || { echo "SKIP: curl missing (scripts/install-deps --slurm installs it)"; exit 77; }

dir=$(mktemp -d /tmp/dlsched-profiling-test.XXXXXX)
chmod 755 "$dir"
port=$("$tool" free-ports) || { echo "Bail out! no free ports"; exit 99; }
fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() { "$tool" down --dir "$dir/c" >/dev/null 2>&1; }
trap cleanup EXIT

if ! "$tool" up --nodes 2 --gpus 4 --dir "$dir/c" --port-base $port --mode dlsched --sched-interval 1 \
	--plugin-dir "$build/plugins/lib" --ingestd "$ingestd" --policy fifo --profiles "$top/contribs/profiles" >"$dir/up.log" 2>&1; then
	cat "$dir/up.log"
	echo "Bail out! cluster did not come up"
	exit 1
fi
export SLURM_CONF="$dir/c/etc/slurm.conf"
db="$dir/c/profiles.db"
ingest="http://127.0.0.1:$((port + 3))"
grep -q "ingest=$ingest" "$dir/c/etc/plugstack.conf" && ok "plugstack.conf enables the collector" ||
	ko "plugstack.conf: $(cat "$dir/c/etc/plugstack.conf")"

mkdir -p "$dir/out" "$dir/ck"
head -c 8000000 /dev/urandom >"$dir/data"
# imagenet reads 1,281,200 x 110 kB per epoch; x 1e-4 (emu-train's default scale) = 14,093,200 bytes.
per_epoch=14093200
# An emulated imagenet job on 2 GPUs with epochs of about $1 s each, $2 epochs.
submit() {  # submit NAME EPOCH_S EPOCHS [sbatch options...]
	local name="$1" es="$2" n="$3"
	mkdir -p "$dir/ck/$name"
	shift 3
	# 2 GPUs: epoch time = t1 / speedup(2); ask for t1 = es x 2 (a slightly longer epoch).
	sbatch --parsable --requeue -J "$name" -o "$dir/out/$name.out" --open-mode=append --gres=gpu:2 \
		--dl-model=imagenet --dl-epochs="$n" "$@" \
		--wrap "exec $emu --model imagenet --epochs $n --epoch-time-1gpu $(awk -v e="$es" 'BEGIN{print e*2}') --noise 0 \
			--checkpoint-dir $dir/ck/$name --data $dir/data --profiles $top/contribs/profiles"
}
. "$top/testsuite/cluster/lib.sh"  # wait_done, completed
# The epochs of a job in the DB, one line each: epoch,run,bytes_read.
epochs_of() { "$dbtool" --db "$db" export epochs 2>/dev/null | awk -F, -v j="$1" '$2 == j { print $4 "," $3 "," $8 }' | sort -t, -n -k1,1; }
wait_epochs() {  # wait_epochs SECONDS JOBID N: until the DB has N epochs of the job
	local t=0
	while [ $t -lt $(($1 * 2)) ]; do
		[ "$(epochs_of "$2" | wc -l)" -ge "$3" ] && return 0
		sleep 0.5
		t=$((t + 1))
	done
	return 1
}
# "1 2 3 ... N" exactly once each, from lines starting with the epoch number.
is_sequence() { awk -F, -v n="$1" '{ if ($1 != NR) bad = 1 } END { exit !(NR == n && !bad) }'; }

# ---- a job's epochs, traffic and checkpoints land in the DB ----

a=$(submit a 1 5)
wait_done 60 "$a" || ko "job a did not finish in 60 s"
if wait_epochs 20 "$a" 5; then
	epochs_of "$a" | is_sequence 5 && ok "job a: epochs 1 to 5 recorded once each" || ko "job a epochs: $(epochs_of "$a" | tr '\n' ' ')"
	mid=$(epochs_of "$a" | awk -F, '$1 == 3 { print $3 }')
	awk -v b="${mid:--1}" -v e=$per_epoch 'BEGIN { exit !(b >= 0.9 * e && b <= 1.3 * e) }' &&
		ok "job a: epoch 3 read $mid bytes (the model's data rate: $per_epoch)" || ko "job a: epoch 3 read ${mid:-?} bytes, expected about $per_epoch"
else
	ko "job a: $(epochs_of "$a" | wc -l) of 5 epochs in the DB after 20 s; collector log: $(tail -n 5 "$dir"/c/spool/dlsched/*/collect.log 2>/dev/null)"
fi
"$dbtool" --db "$db" --cluster dlsched job "$a" >"$dir/job-a.txt" 2>&1
grep -q "model imagenet, user root" "$dir/job-a.txt" && ok "job a recorded as root's imagenet job" || ko "job a: $(head -n1 "$dir/job-a.txt")"
saves=$(grep -c "^  save" "$dir/job-a.txt")
[ "$saves" -eq 5 ] && ok "job a: 5 checkpoint saves recorded (one per epoch)" || ko "job a: $saves checkpoint saves"

# ---- a Slurm client linked with libslurm.so loads select/dlsched_cons_tres to read a job ----
loadjob="$build/testsuite/cluster/load-job"
if [ -x "$loadjob" ] && [ -n "${DLSCHED_SLURM_PREFIX:-}" ]; then
	# On another release the client must be that release's: load-job is linked with Debian's
	# libslurm (22.05), whose plugin loader refuses the release's plugins. Built here against the
	# release's headers (the tree the plugins were built with) and the prefix's libslurm.
	loadjob="$dir/load-job"
	cc $(sed -n 's/^SLURM_SPANK_CPPFLAGS = //p' "$build/Makefile") -o "$loadjob" "$top/testsuite/cluster/load-job.c" \
		-L"$DLSCHED_SLURM_PREFIX/lib" -Wl,-rpath,"$DLSCHED_SLURM_PREFIX/lib" -lslurm >"$dir/load-job.err" 2>&1 ||
		{ ko "load-job against $DLSCHED_SLURM_PREFIX's libslurm did not build: $(head -n3 "$dir/load-job.err")"; loadjob=""; }
fi
if [ -n "$loadjob" ] && [ -x "$loadjob" ]; then
	out=$("$loadjob" "$a" 2>&1)
	[ "$out" = "job $a uid 0" ] && ok "a libslurm.so client reads job $a (the select plugin loads outside slurmctld)" ||
		ko "libslurm.so client: $out"
fi

# ---- refused records: no credential; a uid that does not own the job ----
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/x-munge' \
	--data-binary '{"v":1,"cluster":"dlsched","job_id":'"$a"',"step":"batch","node":"n1","run":0,"records":[]}' "$ingest/v1/records")
[ "$code" = 401 ] && ok "a record without a munge credential is refused (401)" || ko "unauthenticated record: HTTP $code"
payload='{"v":1,"cluster":"dlsched","job_id":'"$a"',"step":"batch","node":"n1","run":0,"records":[{"type":"epoch","epoch":99,"gpus":2,"start":1790000000,"end":1790000001,"bytes_read":1,"net_rx_bytes":-1,"nfs_read_bytes":-1}]}'
cred=$(setpriv --reuid=65534 --regid=65534 --clear-groups munge -S "$dir/c/munge/munge.socket" -s "$payload" 2>&1)
code=$(curl -s -o "$dir/forged.txt" -w '%{http_code}' -H 'Content-Type: application/x-munge' --data-binary "$cred" "$ingest/v1/records")
[ "$code" = 403 ] && ok "a record from uid 65534 for root's job is refused (403)" || ko "forged record: HTTP $code $(cat "$dir/forged.txt")"
epochs_of "$a" | grep -q '^99,' && ko "the forged epoch 99 is in the DB" || ok "the forged epoch is not in the DB"
stats=$(curl -s "$ingest/v1/stats")
echo "$stats" | grep -Eq '"bad_credential": ?[1-9]' && echo "$stats" | grep -Eq '"wrong_user": ?[1-9]' &&
	ok "refusals counted ($stats)" || ko "stats: $stats"

# ---- owner lookups through real squeue and sacct (a second service, an empty DB of its own) ----
#  - job a (root's, known to slurmctld) from uid 65534: looked up, 403 wrong_user;
#  - a job nobody knows: 403 unknown_job, remembered: a second batch is answered from the cache
#    (no new lookup: owner_lookups stays), and asked again after --unknown-job-ttl; with
#    --unknown-job-cache 2, a third unknown job pushes out the oldest;
#  - slurmctld unreachable (a slurm.conf naming a dead port; slurmdbd still answers, knowing
#    nothing of the job): 503 lookup_failed, never 403 (squeue exits 1 for both; it was 403, and
#    the collector would have moved the batch to rejected/).
lookup_svc() {  # lookup_svc NAME SLURM_CONF: sets $lurl and $lpid
	"$dbtool" --db "$dir/$1.db" init >/dev/null
	SLURM_CONF="$2" "$ingestd" --listen 127.0.0.1:0 --db "$dir/$1.db" --munge-socket "$dir/c/munge/munge.socket" \
		--slurm-user root --owner-lookup slurm --unknown-job-ttl 3 --unknown-job-cache 2 --log-file "$dir/$1.log" -v >"$dir/$1.out" 2>&1 &
	lpid=$!
	local t=0 p=""
	until [ -n "$p" ] || [ $t -ge 100 ]; do
		sleep 0.1
		t=$((t + 1))
		p=$(sed -n 's/^dlsched-ingestd: listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$dir/$1.out")
	done
	lurl="http://127.0.0.1:$p"
}
lpost() {  # lpost JOB: a batch of uid 65534 for JOB until the answer is not lookup_pending; sets $code $body $tries
	local payload='{"v":1,"cluster":"dlsched","job_id":'"$1"',"step":"batch","node":"n1","run":0,"records":[{"type":"epoch","epoch":1,"gpus":1,"start":1790000000,"end":1790000001}]}'
	tries=0
	while [ $tries -lt 40 ]; do
		tries=$((tries + 1))
		setpriv --reuid=65534 --regid=65534 --clear-groups munge -S "$dir/c/munge/munge.socket" -s "$payload" >"$dir/l.cred"
		code=$(curl -s -o "$dir/l.body" -w '%{http_code}' -H 'Content-Type: application/x-munge' --data-binary @"$dir/l.cred" "$lurl/v1/records")
		body=$(cat "$dir/l.body")
		[ "$code" = 503 ] && echo "$body" | grep -q lookup_pending || break
		sleep 0.25
	done
}
lstat() { curl -s "$lurl/v1/stats" | sed -n 's/.*"'"$1"'": *\([0-9]*\).*/\1/p'; }
lookup_svc lk "$SLURM_CONF"
lpost "$a"
[ "$code" = 403 ] && echo "$body" | grep -q wrong_user && ok "job $a looked up with squeue: root's, 403 wrong_user for uid 65534" ||
	ko "lookup of job $a: $code $body"
lpost 999999
n1=$(lstat owner_lookups)
[ "$code" = 403 ] && echo "$body" | grep -q unknown_job && [ "$(lstat unknown_jobs_cached)" = 1 ] &&
	ok "an unknown job: 403 unknown_job after $tries tries, remembered (unknown_jobs_cached 1, owner_lookups $n1)" ||
	ko "unknown job: $code $body, stats $(curl -s "$lurl/v1/stats")"
lpost 999999
[ "$code" = 403 ] && [ "$tries" = 1 ] && [ "$(lstat owner_lookups)" = "$n1" ] &&
	ok "the second batch is answered from the cache at once (owner_lookups still $n1)" ||
	ko "second batch of the unknown job: $code $body after $tries tries, owner_lookups $(lstat owner_lookups) (was $n1)"
sleep 3.5
lpost 999999
[ "$code" = 403 ] && [ "$(lstat owner_lookups)" = $((n1 + 1)) ] &&
	ok "after --unknown-job-ttl 3 the job is asked of Slurm again (owner_lookups $((n1 + 1)))" ||
	ko "after the TTL: $code $body, owner_lookups $(lstat owner_lookups) (was $n1)"
n1=$(lstat owner_lookups)
lpost 999997
lpost 999996
cached=$(lstat unknown_jobs_cached)
lpost 999999
[ "$cached" = 2 ] && [ "$code" = 403 ] && [ "$(lstat owner_lookups)" = $((n1 + 3)) ] &&
	ok "--unknown-job-cache 2: two more unknown jobs keep 2 cached, the oldest is asked again" ||
	ko "cache bound: $cached cached, then $code $body, owner_lookups $(lstat owner_lookups) (was $n1, want +3)"
kill "$lpid"; wait "$lpid" 2>/dev/null
# (MessageTimeout=2: squeue gives up after 2 s, well within the service's 10 s limit per command)
{ grep -v '^MessageTimeout=' "$SLURM_CONF" | sed 's/^SlurmctldPort=.*/SlurmctldPort=1/'; echo MessageTimeout=2; } >"$dir/dead-ctld.conf"
lookup_svc dead "$dir/dead-ctld.conf"
lpost 999998
[ "$code" = 503 ] && echo "$body" | grep -q lookup_failed && grep -q "Unable to contact slurm controller" "$dir/dead.log" &&
	ok "slurmctld unreachable: 503 lookup_failed (the log says squeue could not reach it)" ||
	ko "slurmctld unreachable: $code $body"
kill "$lpid"; wait "$lpid" 2>/dev/null

# ---- dlsched-ingestd stopped mid-run and restarted: nothing lost ----
b=$(submit b 1 8)
t=0
until grep -q "epoch 2 done" "$dir/out/b.out" 2>/dev/null || [ $t -ge 120 ]; do sleep 0.25; t=$((t + 1)); done
ipid=$(cat "$dir/c/pids/ingestd.pid")
mapfile -d '' icmd <"/proc/$ipid/cmdline"
kill -TERM "$ipid"
sleep 4
(cd "$dir/c" && "${icmd[@]}" >>"$dir/c/log/ingestd.out" 2>&1 &)
wait_done 60 "$b" || ko "job b did not finish in 60 s"
if wait_epochs 30 "$b" 8 && epochs_of "$b" | is_sequence 8; then
	ok "job b: all 8 epochs recorded once across the ingest service's restart"
else
	ko "job b epochs after the restart: $(epochs_of "$b" | tr '\n' ' ')"
fi
grep -q "job $b.batch: cannot deliver" "$dir"/c/spool/dlsched/*/collect.log &&
	ok "job b's collector spooled while the service was down" || ko "job b's collector never failed a delivery: the outage was not tested"
left=$(find "$dir/c/spool/dlsched" -name '*.json' 2>/dev/null | wc -l)
[ "$left" -eq 0 ] && ok "the collector's spool is empty" || ko "$left batches still spooled"

# ---- a job asked to checkpoint is requeued and resumes without repeating an epoch ----
c=$(submit c 1 8)
t=0
until grep -q "epoch 3 done" "$dir/out/c.out" 2>/dev/null || [ $t -ge 120 ]; do sleep 0.25; t=$((t + 1)); done
# What Slurm's own requeue does (SIGTERM; sched/dlsched sends the checkpoint signal first, which
# test-plugins.sh covers): the job saves and exits, and runs again.
scontrol requeue "$c"
wait_done 240 "$c" || ko "job c did not finish in 240 s after its requeue"
# slurmdbd may record the end a few seconds after the job left the queue (a loaded machine).
c_records() { sacct -n -X -P --duplicates -o State -j "$c" | tr '\n' ' '; }
wait_for 20 sh -c "sacct -n -X -P --duplicates -o State -j $c | grep -q COMPLETED"
recs=$(c_records)
[[ "$recs" == *REQUEUED* && "$recs" == *COMPLETED* ]] && ok "job c requeued, then completed ($recs)" || ko "job c records: $recs"
done_lines=$(grep -o "^epoch [0-9]* done" "$dir/out/c.out" | awk '{ print $2 }' | tr '\n' ' ')
[ "$done_lines" = "1 2 3 4 5 6 7 8 " ] && ok "job c trained epochs 1 to 8 once each across its two runs" ||
	ko "job c epochs in its output: $done_lines"
if wait_epochs 30 "$c" 8 && epochs_of "$c" | is_sequence 8; then
	runs=$(epochs_of "$c" | cut -d, -f2 | sort -u | tr '\n' ' ')
	[ "$runs" = "0 1 " ] && ok "job c: epochs 1 to 8 in the DB, over runs 0 and 1" || ko "job c runs: $runs"
else
	ko "job c epochs in the DB: $(epochs_of "$c" | tr '\n' ' ')"
fi
"$dbtool" --db "$db" --cluster dlsched job "$c" >"$dir/job-c.txt" 2>&1
grep -Eq "^ +load +1 +[3-9]" "$dir/job-c.txt" && ok "job c: its restart loaded the checkpoint (run 1)" ||
	ko "job c checkpoints: $(grep -E 'save|load' "$dir/job-c.txt" | tr '\n' ';')"

# Down before the directory goes: its pid files are how down finds the daemons.
trap - EXIT
cleanup
left=$(pgrep -f "$dir/c" | wc -l)
[ "$left" -eq 0 ] && ok "down left no process behind" || ko "$left processes left after down"
[ $fails -eq 0 ] || { echo "$fails check(s) failed; cluster logs in $dir/c/log"; exit 1; }
rm -rf "$dir"
