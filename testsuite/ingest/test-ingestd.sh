#!/bin/sh
# dlsched-ingestd against a private munged (doc/protocol.md, section 2): a valid batch lands and a
# resent one counts as duplicates; missing, garbage, forged (another munged's key) and replayed
# credentials are 401; another uid's report for root's job is 403; malformed batches are 400 naming
# the field; an oversized body is 413; /v1/stats counts each refusal; after SIGTERM a restarted
# service on the same DB keeps everything. Skips (77) only where dlsched-ingestd or munge is missing.
set -u
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top/testsuite/ingest/lib.sh"  # $build, $ingestd, $dbtool, $munged, $py; start_munged, listening_port

if [ ! -x "$ingestd" ]; then
	echo "SKIP: $ingestd was not built (configure found no libmicrohttpd or munge: install libmicrohttpd-dev libmunge-dev, then configure again)"
	exit 77
fi
if [ ! -x "$munged" ] || ! command -v munge >/dev/null || ! command -v unmunge >/dev/null; then
	echo "SKIP: munged, munge or unmunge not installed (apt-get install munge)"
	exit 77
fi
if ! command -v curl >/dev/null; then
	echo "SKIP: curl not installed (apt-get install curl)"
	exit 77
fi

tmp=$(mktemp -d /tmp/dlsched-ingestd.XXXXXX)
chmod 755 "$tmp"  # munge clients of another uid must reach the socket
ipid=""
cleanup() {
	[ -n "$ipid" ] && kill "$ipid" 2>/dev/null && wait "$ipid" 2>/dev/null
	[ -n "${spid:-}" ] && kill "$spid" 2>/dev/null
	for m in m1 m2; do
		[ -f "$tmp/$m/pid" ] && kill "$(cat "$tmp/$m/pid")" 2>/dev/null
	done
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fails=0
ok() { echo "ok: $*"; }
ko() { echo "FAIL: $*"; fails=$((fails + 1)); }

# A private munged per key (lib.sh).
start_munged m1
start_munged m2
sock="$tmp/m1/sock"

# Root may always report (and is SlurmUser here); other uids only for their own jobs. The owners
# are in the DB, as --owner-lookup slurm would have remembered them from slurmctld.
db="$tmp/profiles.db"
"$dbtool" --db "$db" init >/dev/null || { echo "FAIL: dlsched-db init"; exit 1; }
"$py" - "$db" <<'PY' || { echo "FAIL: could not add the jobs' owners"; exit 1; }
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO jobs (cluster, job_id, user, gpus) VALUES ('dlsched', 42, 'root', 0)")
c.execute("INSERT INTO jobs (cluster, job_id, user, gpus) VALUES ('dlsched', 43, 'nobody', 0)")
c.commit()
PY

max=16384
start_ingestd() {
	: >"$tmp/ingestd.out"
	"$ingestd" --listen 127.0.0.1:0 --db "$db" --munge-socket "$sock" --owner-lookup db-only --cluster dlsched \
		--slurm-user root --max-request $max --pid-file "$tmp/ingestd.pid" --log-file "$tmp/ingestd.log" -v \
		>"$tmp/ingestd.out" 2>&1 &
	ipid=$!
	port=$(listening_port "$tmp/ingestd.out" "$ipid")
	if [ -z "$port" ]; then
		echo "FAIL: dlsched-ingestd did not start: $(cat "$tmp/ingestd.out" "$tmp/ingestd.log" 2>/dev/null)"
		exit 1
	fi
	url="http://127.0.0.1:$port"
}
start_ingestd

now=$(date +%s)
t() { echo $((now - 1000 + $1)); }  # plausible times: a little in the past
job42='{"v":1,"cluster":"dlsched","job_id":42,"step":"batch","node":"n1","run":0,"records":[
 {"type":"job","model":"resnet50","gpus":4,"nodes":1,"epochs_total":90,"start":'$(t 0)'},
 {"type":"epoch","epoch":1,"gpus":4,"start":'$(t 1)'.5,"end":'$(t 61)'.5,"bytes_read":1048576000,"net_rx_bytes":20480,"nfs_read_bytes":-1},
 {"type":"epoch","epoch":2,"gpus":4,"start":'$(t 61)'.5,"end":'$(t 121)'.5,"bytes_read":1048576000,"net_rx_bytes":20480,"nfs_read_bytes":-1},
 {"type":"checkpoint","kind":"save","epoch":2,"bytes":102760448,"seconds":1.84,"at":'$(t 125)'}]}'

# cred FILE PAYLOAD [AS-UID] [SOCKET]: a credential carrying PAYLOAD, made by uid AS-UID.
cred() {
	if [ -n "${3:-}" ]; then
		printf '%s' "$2" | setpriv --reuid="$3" --regid="$3" --clear-groups munge -S "${4:-$sock}" >"$1"
	else
		printf '%s' "$2" | munge -S "${4:-$sock}" >"$1"
	fi
}
# post FILE [CONTENT-TYPE] [curl options]: sets $code and $body.
post() {
	f=$1
	ct=${2:-application/x-munge}
	shift
	[ $# -gt 0 ] && shift
	code=$(curl -s --max-time 20 -o "$tmp/body" -w '%{http_code}' -H "Content-Type: $ct" "$@" \
		--data-binary @"$f" "$url/v1/records")
	body=$(cat "$tmp/body" 2>/dev/null)
}
# expect NAME CODE TEXT: the last answer had status CODE and its body contains TEXT.
expect() {
	if [ "$code" = "$2" ] && printf '%s' "$body" | grep -qF -- "$3"; then
		ok "$1 ($code $body)"
	else
		ko "$1: got $code '$body', want $2 with '$3'"
	fi
}

# (a) A valid batch from uid 0 lands; sent again (a fresh credential) it is all duplicates.
cred "$tmp/a.cred" "$job42"
post "$tmp/a.cred"
expect "valid batch from uid 0" 200 '{"accepted":4,"duplicates":0}'
"$dbtool" --db "$db" job 42 --cluster dlsched >"$tmp/job" 2>&1
if grep -q "job 42 on dlsched: model resnet50, user root, 4 GPU(s) on 1 node(s), 90 epochs, state running" "$tmp/job" &&
	grep -Eq '^ +1 +0 +4 +60\.000 +1048576000 +20480 +-1$' "$tmp/job" &&
	grep -Eq '^ +2 +0 +4 +60\.000 +1048576000 +20480 +-1$' "$tmp/job" &&
	grep -Eq '^ +save +0 +2\.000 +102760448 +1\.840$' "$tmp/job"; then
	ok "dlsched-db shows the job, its 2 epochs and its checkpoint"
else
	ko "dlsched-db job 42: $(cat "$tmp/job")"
fi
cred "$tmp/a2.cred" "$job42"
post "$tmp/a2.cred"
expect "the same batch again: duplicates" 200 '{"accepted":0,"duplicates":4}'
end42='{"v":1,"cluster":"dlsched","job_id":42,"step":"batch","node":"n1","run":0,"records":[{"type":"job_end","end":'$(t 200)',"state":"completed"}]}'
cred "$tmp/end.cred" "$end42"
post "$tmp/end.cred"
expect "job_end" 200 '{"accepted":1,"duplicates":0}'
"$dbtool" --db "$db" job 42 --cluster dlsched 2>&1 | grep -q "model resnet50, user root, 4 GPU(s) on 1 node(s), 90 epochs, state completed" &&
	ok "job_end sets the state and keeps the job's other fields" || ko "job_end: $("$dbtool" --db "$db" job 42 --cluster dlsched 2>&1)"

# (b) No credential, or a body that is not one: 401.
: >"$tmp/empty"
post "$tmp/empty"
expect "no credential" 401 '"error":"bad_credential"'
printf 'MUNGE:this-is-not-a-credential:' >"$tmp/garbage"
post "$tmp/garbage"
expect "garbage credential" 401 '"error":"bad_credential"'

# (c) A credential from another munged (another key): forged, 401.
cred "$tmp/forged.cred" "$job42" "" "$tmp/m2/sock"
cred "$tmp/forged-check.cred" "x" "" "$tmp/m2/sock"
unmunge -S "$tmp/m2/sock" <"$tmp/forged-check.cred" >/dev/null 2>&1 &&
	ok "the second munged's credentials are valid to itself" || ko "the second munged cannot decode its own credential"
post "$tmp/forged.cred"
expect "credential of another key (forged)" 401 '"error":"bad_credential"'

# (d) A credential used twice: replayed, 401.
post "$tmp/a.cred"
expect "replayed credential" 401 'Replayed'

# (e) Another uid: its own job is fine, root's job is 403, a job nobody knows is 403.
refused_owner=0
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	cred "$tmp/uid-check.cred" "x" 65534
	unmunge -S "$sock" <"$tmp/uid-check.cred" 2>/dev/null | grep -Eq '^UID: .*\(65534\)' &&
		ok "setpriv makes credentials of uid 65534" || ko "setpriv: the credential's uid is not 65534"
	own='{"v":1,"cluster":"dlsched","job_id":43,"step":"0","node":"n2","run":1,"records":[{"type":"epoch","epoch":1,"gpus":1,"start":'$(t 0)',"end":'$(t 30)'}]}'
	cred "$tmp/own.cred" "$own" 65534
	post "$tmp/own.cred"
	expect "uid 65534 reports for its own job" 200 '{"accepted":1,"duplicates":0}'
	cred "$tmp/other.cred" "$end42" 65534
	post "$tmp/other.cred"
	expect "uid 65534 reports for root's job" 403 '"error":"wrong_user"'
	cred "$tmp/unknown.cred" "$(printf '%s' "$end42" | sed 's/"job_id":42/"job_id":99/')" 65534
	post "$tmp/unknown.cred"
	expect "uid 65534 reports for an unknown job" 403 '"error":"unknown_job"'
	refused_owner=1
else
	echo "SKIP: the other-uid checks (e) need root and setpriv"
fi

# (f) Malformed batches: 400, naming the record and field.
bad_end='{"v":1,"cluster":"dlsched","job_id":42,"step":"batch","node":"n1","run":0,"records":[{"type":"epoch","epoch":3,"gpus":4,"start":'$(t 300)'.0,"end":'$(t 290)'.0}]}'
cred "$tmp/f1.cred" "$bad_end"
post "$tmp/f1.cred"
expect "an epoch that ends before it starts" 400 "records[0].end: $(t 290).0 is before start $(t 300).0"
cred "$tmp/f2.cred" "$(printf '%s' "$bad_end" | sed 's/"gpus":4/"gpu":4/')"
post "$tmp/f2.cred"
expect "an unknown key" 400 "records[0]: unknown key 'gpu'"
cred "$tmp/f3.cred" '{"v":1,"cluster":'
post "$tmp/f3.cred"
expect "broken JSON" 400 'batch:1:'
cred "$tmp/f4.cred" '{"v":2,"cluster":"dlsched","job_id":42,"step":"batch","node":"n1","run":0,"records":[]}'
post "$tmp/f4.cred"
expect "protocol version 2" 400 "v: 2 is not a protocol version"
"$dbtool" --db "$db" job 42 --cluster dlsched 2>&1 | grep -Eq '^ +3 ' &&
	ko "a refused batch left epoch 3 in the DB" || ok "refused batches leave nothing in the DB"

# (g) A body over --max-request: 413, announced (Content-Length) or not (chunked).
head -c $((max + 1)) /dev/zero | tr '\0' 'A' >"$tmp/big"
post "$tmp/big"
expect "a body over --max-request" 413 '"error":"too_large"'
post "$tmp/big" application/x-munge -H 'Transfer-Encoding: chunked'
expect "a chunked body over --max-request" 413 '"error":"too_large"'

# Wrong content type, method and path.
post "$tmp/a2.cred" text/plain
expect "another content type" 415 '"error":"bad_content_type"'
code=$(curl -s --max-time 20 -o "$tmp/body" -w '%{http_code}' "$url/v1/records"); body=$(cat "$tmp/body")
expect "GET /v1/records" 405 '"error":"bad_method"'
code=$(curl -s --max-time 20 -o "$tmp/body" -w '%{http_code}' "$url/v2/records"); body=$(cat "$tmp/body")
expect "an unknown path" 404 '"error":"bad_path"'

# (h) /v1/stats counts each refusal by reason, and the log names the peer of each.
code=$(curl -s --max-time 20 -o "$tmp/body" -w '%{http_code}' "$url/v1/stats"); body=$(cat "$tmp/body")
expect_stats() {
	printf '%s' "$body" | grep -qF "\"$1\":$2" && ok "stats: $1 = $2" || ko "stats: want $1 = $2 in $body"
}
expect_stats batches_accepted $((3 + refused_owner))
expect_stats records_accepted $((5 + refused_owner))
expect_stats duplicates 4
expect_stats bad_credential 4
expect_stats wrong_user $refused_owner
expect_stats unknown_job $refused_owner
expect_stats malformed 4
expect_stats too_large 2
expect_stats bad_content_type 1
expect_stats bad_method 1
expect_stats bad_path 1
expect_stats db_error 0
refusals=$((4 + 2 * refused_owner + 4 + 2 + 1 + 1 + 1))
n=$(grep -c "refused 127\.0\.0\.1:[0-9]*" "$tmp/ingestd.log")
[ "$n" -eq $refusals ] && ok "one log line with the peer address per refusal ($n)" ||
	ko "log: $n refusal lines, want $refusals: $(grep refused "$tmp/ingestd.log")"

# (i) SIGTERM stops it cleanly; restarted on the same DB, everything is still there.
kill -TERM "$ipid"
i=0
while kill -0 "$ipid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$ipid" 2>/dev/null; then
	ko "dlsched-ingestd still runs 10 s after SIGTERM"
else
	wait "$ipid"
	status=$?
	[ $status -eq 0 ] && [ ! -e "$tmp/ingestd.pid" ] && grep -q "stopped:" "$tmp/ingestd.log" &&
		ok "SIGTERM: exit 0, pid file removed" || ko "SIGTERM: exit $status; $(tail -3 "$tmp/ingestd.log")"
fi
ipid=""
start_ingestd
"$dbtool" --db "$db" job 42 --cluster dlsched >"$tmp/job" 2>&1
grep -q "state completed" "$tmp/job" && [ "$(grep -Ec '^ +[12] +0 +4 +60\.000' "$tmp/job")" -eq 2 ] &&
	ok "after a restart the DB has the job and its epochs" || ko "after restart: $(cat "$tmp/job")"
cred "$tmp/a3.cred" "$job42"
post "$tmp/a3.cred"
expect "after a restart, the first batch is still a duplicate" 200 '{"accepted":0,"duplicates":4}'

# ---- limits and lookups: a second service per case, on its own DB ----
# start_svc NAME [options]: sets $surl and $spid; the service's log is $tmp/NAME.log.
spid=""
start_svc() {
	n=$1
	shift
	"$dbtool" --db "$tmp/$n.db" init >/dev/null
	: >"$tmp/$n.out"
	"$ingestd" --listen 127.0.0.1:0 --db "$tmp/$n.db" --munge-socket "$sock" --slurm-user root \
		--log-file "$tmp/$n.log" -v "$@" >"$tmp/$n.out" 2>&1 &
	spid=$!
	svc_wait "$n"
}
svc_wait() {
	sport=$(listening_port "$tmp/$1.out" "$spid")
	[ -n "$sport" ] || { ko "$1: dlsched-ingestd did not start: $(cat "$tmp/$1.out")"; return 1; }
	surl="http://127.0.0.1:$sport"
}
stop_svc() { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=""; }
# spost FILE [curl options]: like post, to $surl; also sets $retry (the Retry-After header).
spost() {
	f=$1
	shift
	code=$(curl -s --max-time 20 -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' \
		-H "Content-Type: application/x-munge" "$@" --data-binary @"$f" "$surl/v1/records")
	body=$(cat "$tmp/body" 2>/dev/null)
	retry=$(sed -n 's/^Retry-After: *\([0-9]*\).*/\1/pi' "$tmp/headers" | tr -d '\r')
}
epoch_batch() {  # epoch_batch JOB EPOCH [CLUSTER]
	echo '{"v":1,"cluster":"'"${3:-dlsched}"'","job_id":'"$1"',"step":"batch","node":"n1","run":0,"records":[{"type":"epoch","epoch":'"$2"',"gpus":1,"start":'"$(t "$2")"',"end":'"$(t $(($2 + 1)))"'}]}'
}

# (j) --cluster: a batch of another cluster is 403 wrong_cluster; no --cluster and no slurm.conf
# saying it: a usage error naming the option; else slurm.conf's ClusterName.
start_svc cl --owner-lookup db-only --cluster dlsched
cred "$tmp/cl.cred" "$(epoch_batch 42 1 other)"
spost "$tmp/cl.cred"
expect "a batch of another cluster" 403 '"error":"wrong_cluster"'
stop_svc
SLURM_CONF=/nonexistent "$ingestd" --db "$tmp/cl.db" --owner-lookup db-only >"$tmp/nocl.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q -- "--cluster: give the cluster" "$tmp/nocl.out" && ok "no --cluster: usage error" ||
	ko "no --cluster: rc $rc, $(head -n1 "$tmp/nocl.out")"
printf 'ClusterName=fromconf\n' >"$tmp/slurm.conf"
SLURM_CONF="$tmp/slurm.conf" start_svc cl2 --owner-lookup db-only
grep -q "cluster fromconf" "$tmp/cl2.log" && ok "--cluster defaults to slurm.conf's ClusterName" ||
	ko "cluster default: $(grep listening "$tmp/cl2.log")"
stop_svc

# (k) --rate-limit: a burst past the bucket is 429 with Retry-After; --row-quota: 429 naming it.
start_svc rl --owner-lookup db-only --cluster dlsched --rate-limit 0.5 --rate-burst 2
for k in 1 2 3; do cred "$tmp/rl$k.cred" "$(epoch_batch 42 $k)"; spost "$tmp/rl$k.cred"; done
expect "a third batch at once, with --rate-burst 2" 429 '"error":"rate_limited"'
[ "$retry" = 2 ] && ok "429 says Retry-After: 2 (one batch per 2 s)" || ko "Retry-After '$retry', want 2"
stop_svc
start_svc rq --owner-lookup db-only --cluster dlsched --row-quota 2
for k in 1 2 3; do cred "$tmp/rq$k.cred" "$(epoch_batch 42 $k)"; spost "$tmp/rq$k.cred"; done
expect "a third record with --row-quota 2" 429 '"error":"row_quota"'
[ -n "$retry" ] && [ "$retry" -gt 3500 ] && [ "$retry" -le 3600 ] && ok "row quota: Retry-After $retry s (the hour's end)" ||
	ko "row quota Retry-After '$retry'"
stop_svc

# (l) --max-connections-per-ip: connections past the limit are closed at once and counted, while
# the service goes on answering.
start_svc ip --owner-lookup db-only --cluster dlsched --max-connections-per-ip 3
"$py" - "$sport" >"$tmp/ip.out" 2>&1 <<'PY'
import socket, sys, time
port = int(sys.argv[1])
held, closed = [], 0
for i in range(6):
    held.append(socket.create_connection(("127.0.0.1", port)))
time.sleep(0.5)
for s in held:
    s.settimeout(0.5)
    try:
        if s.recv(1) == b"":
            closed += 1
    except socket.timeout:
        pass
    except OSError:
        closed += 1
print("closed", closed)
PY
grep -q "closed 3" "$tmp/ip.out" && ok "3 of 6 connections from one address closed at once (limit 3)" ||
	ko "per-address limit: $(cat "$tmp/ip.out")"
code=$(curl -s --max-time 5 -o "$tmp/body" -w '%{http_code}' "$surl/v1/stats"); body=$(cat "$tmp/body")
expect "stats after the refused connections" 200 '"connections_refused":3'
stop_svc

# (m) The owner is compared by uid, and an NSS failure is the service's (503), never the sender's
# (403): job 44's owner is 'daemon' (uid 1) in the DB; with /etc/passwd hidden (a mount namespace;
# systemd's NSS module makes up root and nobody only), the name cannot be resolved. Names were
# compared before: '1' against 'daemon', 403 wrong_user, and the collector rejected the batch.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && unshare -m true 2>/dev/null; then
	cp "$db" "$tmp/nss.db"
	"$py" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("INSERT INTO jobs (cluster, job_id, user, gpus) VALUES (\x27dlsched\x27, 44, \x27daemon\x27, 0)"); c.commit()' "$tmp/nss.db"
	: >"$tmp/nss.out"
	unshare -m sh -c 'mount --bind /dev/null /etc/passwd && exec "$0" "$@"' "$ingestd" --listen 127.0.0.1:0 \
		--db "$tmp/nss.db" --munge-socket "$sock" --slurm-user 0 --owner-lookup db-only --cluster dlsched \
		--log-file "$tmp/nss.log" >"$tmp/nss.out" 2>&1 &
	spid=$!
	svc_wait nss
	cred "$tmp/nss.cred" "$(epoch_batch 44 7)" 1
	spost "$tmp/nss.cred"
	expect "NSS cannot resolve the owner's name: 503, not 403" 503 '"error":"lookup_failed"'
	[ -n "$retry" ] && ok "503 with Retry-After: $retry" || ko "no Retry-After on the NSS 503"
	stop_svc
else
	echo "SKIP: the NSS check (m) needs root, setpriv and unshare -m"
fi

# (n) Owner lookups never hold the only thread: "slurmctld" accepts connections and never answers
# (a listening socket nobody reads), so squeue waits for MessageTimeout. The batch is answered 503
# lookup_pending with Retry-After 1 at once, and /v1/stats stays quick meanwhile.
if command -v squeue >/dev/null && command -v sacct >/dev/null; then
	"$py" - "$tmp/hung.port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(60)
PY
	hung=$!
	i=0
	while [ ! -s "$tmp/hung.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	# AuthInfo: squeue signs its request with our munged (without it, it gave up in 4 s for want
	# of munge's default socket, and never reached the hung slurmctld).
	printf 'ClusterName=dlsched\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=%s\nMessageTimeout=30\nAuthInfo=socket=%s\n' \
		"$(cat "$tmp/hung.port")" "$sock" >"$tmp/hung.conf"
	SLURM_CONF="$tmp/hung.conf" start_svc lk --owner-lookup slurm --cluster dlsched
	cred "$tmp/lk.cred" "$(epoch_batch 77 1)" 65534
	t0=$(date +%s%N)
	spost "$tmp/lk.cred"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$code" = 503 ] && [ $ms -lt 1500 ] && printf '%s' "$body" | grep -q lookup_pending && [ "$retry" = 1 ] &&
		ok "owner lookup with slurmctld hung: 503 lookup_pending, Retry-After 1, in $ms ms" ||
		ko "owner lookup with slurmctld hung: $code '$body' Retry-After '$retry' after $ms ms"
	t0=$(date +%s%N)
	code=$(curl -s --max-time 20 -o /dev/null -w '%{http_code}' "$surl/v1/stats")
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$code" = 200 ] && [ $ms -lt 500 ] && ok "stats answered in $ms ms while squeue hangs" ||
		ko "stats while squeue hangs: $code after $ms ms"
	# 16 more jobs at once (a job array starting): past 16 lookups running the rest wait their
	# turn (503 lookup_pending, Retry-After 1), within the 10 s the hung squeues have left. It
	# was lookup_failed, which paused every owner lookup for 30 s.
	for j in $(seq 78 93); do cred "$tmp/lk$j.cred" "$(epoch_batch $j 1)" 65534; done
	for j in $(seq 78 93); do spost "$tmp/lk$j.cred"; done
	[ "$code" = 503 ] && printf '%s' "$body" | grep -q lookup_pending && printf '%s' "$body" | grep -q "16 job lookups are running already" &&
		[ "$retry" = 1 ] && ok "the 17th job at once waits its turn: 503 lookup_pending, Retry-After 1" ||
		ko "17 lookups at once: $code '$body' Retry-After '$retry'"
	code=$(curl -s --max-time 20 -o "$tmp/body" -w '%{http_code}' "$surl/v1/stats"); body=$(cat "$tmp/body")
	expect "no lookup counted as failed" 200 '"lookup_failed":0'
	stop_svc
	kill $hung 2>/dev/null
else
	echo "SKIP: the lookup check (n) needs squeue and sacct"
fi

# ---- claims against what Slurm knows (profiledb/claims.h) ----
# A fake Slurm on PATH: squeue prints $fs/jobs/ID (uid, submit, start, end, state, node list and
# allocated TRES, as squeue -O prints them with SLURM_TIME_FORMAT=%s; only the uid for -o %U) or
# says the job id is invalid; sacct knows nothing. Each call is logged in
# $fs/calls; $fs/delay, when there, makes squeue that slow. uid 1 (daemon) plays Mallory, uid 65534
# (nobody) Alice, whose jobs must stay where they were.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && [ "$(id -nu 1 2>/dev/null)" = daemon ]; then
	fs="$tmp/fakeslurm"
	mkdir -p "$fs/bin" "$fs/jobs"
	: >"$fs/calls"
	cat >"$fs/bin/squeue" <<EOF
#!/bin/sh
echo "squeue \$*" >>"$fs/calls"
[ -f "$fs/delay" ] && sleep "\$(cat "$fs/delay")"
while [ \$# -gt 0 ]; do [ "\$1" = -j ] && id=\$2; [ "\$1" = -o ] && fmt=\$2; shift; done
[ -f "$fs/jobs/\$id" ] && [ "\$fmt" = %U ] && { cut -d'|' -f1 "$fs/jobs/\$id"; exit 0; }  # the uid only
[ -f "$fs/jobs/\$id" ] && { cat "$fs/jobs/\$id"; exit 0; }
echo "slurm_load_jobs error: Invalid job id specified"; exit 1
EOF
	printf '#!/bin/sh\necho "sacct $*" >>"%s/calls"\nexit 0\n' "$fs" >"$fs/bin/sacct"
	chmod 755 "$fs/bin/squeue" "$fs/bin/sacct"
	slurm_job() {  # slurm_job ID UID SUBMIT START END STATE NODELIST [TRES]
		echo "$2|$3|$4|$5|$6|$7|${8:-cpu=1,mem=1G,node=1,billing=1,gres/gpu=1}" >"$fs/jobs/$1"
	}
	mallory=1
	alice=65534
	# spost_as FILE: spost, again while Slurm is being asked (503 lookup_pending), for up to 5 s.
	spost_as() {
		i=0
		spost "$1"
		while [ "$code" = 503 ] && printf '%s' "$body" | grep -q lookup_pending && [ $i -lt 50 ]; do
			sleep 0.1
			cred "$1" "$(cat "$1.payload")" "$(cat "$1.uid")"
			spost "$1"
			i=$((i + 1))
		done
	}
	# send NAME UID PAYLOAD: a credential of UID carrying PAYLOAD, posted until Slurm has answered.
	send() {
		printf '%s' "$3" >"$tmp/$1.payload"
		echo "$2" >"$tmp/$1.uid"
		cred "$tmp/$1" "$3" "$2"
		spost_as "$tmp/$1"
	}
	batch() {  # batch JOB NODE RUN RECORDS
		echo '{"v":1,"cluster":"dlsched","job_id":'"$1"',"step":"batch","node":"'"$2"'","run":'"$3"',"records":['"$4"']}'
	}
	ep() {  # ep EPOCH START END
		echo '{"type":"epoch","epoch":'"$1"',"gpus":1,"start":'"$2"',"end":'"$3"'}'
	}
	save() {  # save EPOCH AT
		echo '{"type":"checkpoint","kind":"save","epoch":'"$1"',"bytes":1000,"seconds":1,"at":'"$2"'}'
	}
	rows() {  # rows JOB TABLE: the DB's rows of that job in that table
		"$py" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute("SELECT count(*) FROM " + sys.argv[3] + " WHERE job_id = ?", (int(sys.argv[2]),)).fetchone()[0])' "$tmp/cs.db" "$1" "$2"
	}
	printf 'ClusterName=dlsched\n' >"$tmp/fake.conf"
	n0=$((now - 900))
	# Alice's job 500 and Mallory's 501 run on n1 and n2 since now - 900.
	slurm_job 500 $alice $((now - 1000)) $n0 $((now + 3600)) RUNNING n1
	slurm_job 501 $mallory $((now - 1000)) $n0 $((now + 3600)) RUNNING 'n[2-3]'
	# Job 600 ran long ago as Mallory's; the DB still has its records. Slurm gave the id again
	# (MaxJobId wrapped): now it is Alice's, running on n1.
	"$dbtool" --db "$tmp/cs.db" init >/dev/null
	"$py" - "$tmp/cs.db" "$now" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
t = int(sys.argv[2]) - 100000
c.execute("INSERT INTO jobs (cluster, job_id, user, model, gpus, start_s, state) VALUES ('dlsched', 600, 'daemon', 'resnet50', 1, ?, 'completed')", (t,))
for e in range(1, 6):
    c.execute("INSERT INTO epochs (cluster, job_id, run, epoch, gpus, start_s, end_s, node) VALUES ('dlsched', 600, 0, ?, 1, ?, ?, 'n9')", (e, t + 100 * e, t + 100 * e + 100))
# Job 601 likewise, of a user who has left since (NSS does not know 'ghost').
c.execute("INSERT INTO jobs (cluster, job_id, user, model, gpus, start_s, state) VALUES ('dlsched', 601, 'ghost', 'resnet50', 1, ?, 'completed')", (t,))
c.execute("INSERT INTO epochs (cluster, job_id, run, epoch, gpus, start_s, end_s, node) VALUES ('dlsched', 601, 0, 1, 1, ?, ?, 'n9')", (t, t + 100))
c.commit()
PY
	slurm_job 601 $alice $((now - 500)) $((now - 400)) $((now + 3600)) RUNNING n1
	slurm_job 600 $alice $((now - 500)) $((now - 400)) $((now + 3600)) RUNNING n1
	PATH="$fs/bin:$PATH" SLURM_CONF="$tmp/fake.conf" start_svc cs --owner-lookup slurm \
		--cluster dlsched --job-info-ttl 0 --lookup-rate 100 --lookup-burst 100
	# Honest reports land: Alice's epochs 1-3 of job 500 on n1, Mallory's 1-4 of job 501 on n3
	# (100 s each).
	send o1 $alice "$(batch 500 n1 0 "$(ep 1 $n0 $((n0 + 100))),$(ep 2 $((n0 + 100)) $((n0 + 200))),$(ep 3 $((n0 + 200)) $((n0 + 300)))")"
	expect "Alice's epochs of her running job" 200 '{"accepted":3,"duplicates":0}'
	send o2 $mallory "$(batch 501 n3 0 "$(ep 1 $n0 $((n0 + 100))),$(ep 2 $((n0 + 100)) $((n0 + 200))),$(ep 3 $((n0 + 200)) $((n0 + 300))),$(ep 4 $((n0 + 300)) $((n0 + 400)))")"
	expect "Mallory's epochs of his running job" 200 '{"accepted":4,"duplicates":0}'
	a500=$(rows 500 epochs)

	# Scenario 1: Mallory requeues his job and claims a save at epoch 90 (its epochs_total): it would
	# be done, first for srtf. A save holds at most one epoch more than reported (4).
	slurm_job 501 $mallory $((now - 150)) 0 $((now - 200)) PENDING ''
	send s1 $mallory "$(batch 501 n3 0 "$(save 90 $((n0 + 410)))")"
	expect "a requeued job's save at epoch 90 after 4 epochs" 403 "the save at epoch 90.0 is ahead of job 501's progress"
	send s1a $mallory "$(batch 501 n3 0 "$(save 5 $now)")"
	expect "a save after the job was requeued" 403 "is after job 501's last run ended (Slurm: PENDING"
	# Nor with 86 made-up epochs of a second each in the same batch: faster than a tenth of its own
	# median steady epoch (100 s).
	fake=""
	for e in $(seq 5 90); do fake="$fake,$(ep $e $((n0 + 400 + e - 5)) $((n0 + 401 + e - 5)))"; done
	send s1b $mallory "$(batch 501 n3 0 "${fake#,},$(save 90 $((n0 + 490)))")"
	expect "86 one-second epochs and a save at 90" 403 "epoch 5 took 1.0 s on 1 GPU(s), under a tenth of job 501's first steady epochs"
	# Nor by numbering: one epoch 89 of a plausible 100 s, then the save at 90.
	send s1c $mallory "$(batch 501 n3 0 "$(ep 89 $((n0 + 400)) $((n0 + 500))),$(save 90 $((n0 + 500)))")"
	expect "epoch 89 right after epoch 4" 403 "epoch 89 follows no epoch 88 of job 501"
	[ "$(rows 501 checkpoints)" = 0 ] && [ "$(rows 501 epochs)" = 4 ] &&
		ok "scenario 1: Mallory's job has its 4 epochs and no save" ||
		ko "scenario 1: job 501 has $(rows 501 epochs) epochs, $(rows 501 checkpoints) checkpoints"

	# Scenario 3: future-dated epochs, made-up nodes.
	slurm_job 501 $mallory $((now - 50)) $((now - 40)) $((now + 3600)) RUNNING 'n[2-3]'
	send s3a $mallory "$(batch 501 n3 1 "$(ep 5 $((now + 100)) $((now + 200)))")"
	expect "an epoch in the future" 403 'is in the future'
	send s3b $mallory "$(batch 501 fake-node 1 "$(ep 5 $((now - 30)) $((now - 20)))")"
	expect "an epoch from a node the job does not hold" 403 'node fake-node is not one of job 501'
	send s3c $mallory "$(batch 501 n2 1 "$(ep 5 $((now - 3000)) $((now - 2900)))")"
	expect "an epoch before the job (re)started" 403 'before job 501 started'
	send s3d $mallory "$(batch 501 n2 1 '{"type":"epoch","epoch":5,"gpus":8,"start":'$((now - 30))',"end":'$((now - 20))'}')"
	expect "an epoch on 8 GPUs of a job Slurm gave 1" 403 'epoch 5 claims 8 GPUs; job 501 holds 1 (Slurm)'
	[ "$(rows 501 epochs)" = 4 ] && [ "$(rows 500 epochs)" = "$a500" ] &&
		ok "scenario 3: no speed sample made up, Alice's job untouched" ||
		ko "scenario 3: job 501 has $(rows 501 epochs) epochs, job 500 $(rows 500 epochs)"

	# Reused id: the DB says Mallory owns job 600, Slurm says Alice. Slurm wins: Mallory's future
	# save is 403, Alice's epochs land, and the earlier job's 5 epochs no longer count as hers.
	send r1 $mallory "$(batch 600 n1 0 "$(save 100 $((now + 30)))")"
	expect "the earlier owner of a reused job id" 403 '"error":"wrong_user"'
	send r2 $alice "$(batch 600 n1 0 "$(ep 1 $((now - 390)) $((now - 290)))")"
	expect "the job's real owner" 200 '{"accepted":1,"duplicates":0}'
	"$dbtool" --db "$tmp/cs.db" job 600 --cluster dlsched >"$tmp/j600" 2>&1
	grep -q "user nobody" "$tmp/j600" && [ "$(rows 600 epochs)" = 1 ] && [ "$(rows 600 checkpoints)" = 0 ] &&
		grep -q "job 600 on cluster dlsched is a new job of uid 65534" "$tmp/cs.log" &&
		ok "reused id: the row is Alice's, with her one epoch only" || ko "reused id: $(cat "$tmp/j600")"
	send r3 $alice "$(batch 601 n1 0 "$(ep 1 $((now - 390)) $((now - 290)))")"
	expect "a reused id whose earlier owner NSS no longer knows: the real owner's batch lands, not 503" 200 '{"accepted":1,"duplicates":0}'
	code=$(curl -s --max-time 5 -o "$tmp/body" -w '%{http_code}' "$surl/v1/stats"); body=$(cat "$tmp/body")
	expect "stats count the refused claims" 200 '"implausible":8'
	stop_svc

	# Slurm's answer is kept (--job-info-ttl, 120 s) but never refuses on its own once it is old:
	# Alice's job 502 grows from 1 to 4 GPUs (checkpointed and requeued bigger); her first epoch on
	# 4 GPUs, 6 s later, makes the service ask again (503 lookup_pending), and lands.
	slurm_job 502 $alice $((now - 1000)) $((now - 300)) $((now + 3600)) RUNNING n1
	PATH="$fs/bin:$PATH" SLURM_CONF="$tmp/fake.conf" start_svc gr --owner-lookup slurm --cluster dlsched
	send g1 $alice "$(batch 502 n1 0 "$(ep 1 $((now - 290)) $((now - 190)))")"
	expect "an epoch of job 502 on its 1 GPU" 200 '{"accepted":1,"duplicates":0}'
	slurm_job 502 $alice $((now - 100)) $((now - 50)) $((now + 3600)) RUNNING n1 'cpu=4,node=1,gres/gpu=4'
	sleep 6
	send g2 $alice "$(batch 502 n1 1 '{"type":"epoch","epoch":2,"gpus":4,"start":'$((now - 40))',"end":'$((now - 10))'}')"
	expect "after it grew to 4 GPUs, an epoch on 4" 200 '{"accepted":1,"duplicates":0}'
	grep -q "epoch 2 claims 4 GPUs; job 502 holds 1 (Slurm); Slurm said so [0-9]* s ago: asking again" "$tmp/gr.log" &&
		ok "the old answer (1 GPU) was asked again, not taken for a refusal" || ko "gr log: $(grep refused "$tmp/gr.log")"
	stop_svc

	# Lookups never block the one thread, and one uid cannot make many: squeue takes 2 s; Mallory
	# sends 20 batches of 20 unknown jobs at once; with --lookup-burst 5 only 5 are asked of Slurm.
	echo 2 >"$fs/delay"
	: >"$fs/calls"
	PATH="$fs/bin:$PATH" SLURM_CONF="$tmp/fake.conf" start_svc lr --owner-lookup slurm --cluster dlsched \
		--lookup-rate 0.1 --lookup-burst 5
	for j in $(seq 700 719); do cred "$tmp/lr$j.cred" "$(epoch_batch $j 1)" $mallory; done
	t0=$(date +%s%N)
	pending=0 limited=0
	for j in $(seq 700 719); do
		spost "$tmp/lr$j.cred"
		printf '%s' "$body" | grep -q lookup_pending && pending=$((pending + 1))
		printf '%s' "$body" | grep -q lookup_limited && limited=$((limited + 1))
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ $pending = 5 ] && [ $limited = 15 ] && [ "$retry" -ge 1 ] &&
		ok "20 unknown jobs at once: 5 asked of Slurm (503 lookup_pending), 15 deferred (503 lookup_limited, Retry-After $retry)" ||
		ko "20 unknown jobs: $pending pending, $limited limited; last $code '$body'"
	[ $ms -lt 2500 ] && ok "20 batches answered in $ms ms while squeue takes 2 s each" ||
		ko "20 batches took $ms ms: the thread waited for squeue"
	sleep 0.5
	[ "$(grep -c '^squeue' "$fs/calls")" = 5 ] && ok "5 squeue calls for Mallory's 20 jobs" ||
		ko "squeue calls: $(grep -c '^squeue' "$fs/calls"), want 5"
	stop_svc
	rm -f "$fs/delay"
else
	echo "SKIP: the claims checks need root, setpriv and uid 1 named daemon"
fi

# munged gone: 503, so that collectors keep the batch and retry.
kill "$(cat "$tmp/m1/pid")"
i=0
while [ -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
post "$tmp/a3.cred"
expect "munged unreachable" 503 '"error":"auth_unavailable"'

echo "ingestd: $fails failure(s)"
[ $fails -eq 0 ]
