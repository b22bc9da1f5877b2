#!/usr/bin/env bash
# dlsched-collect without Slurm: run directly against a private munged and a stand-in ingest
# service (receiver.py, which checks every credential with unmunge and answers 200, 503, 403 as
# told), with a pretend step (a process tree that reads files and reports with dlsched-progress).
#  - the job record, epochs and checkpoints arrive in order, one fresh credential each, from our uid;
#  - an epoch carries what the step's processes read during it (bytes_read), a bad line is skipped;
#  - the service down: batches wait in the spool, and are delivered in order when it is back;
#  - 503 is retried; 403 moves the batch to rejected/ with the answer beside it;
#  - SIGTERM: the rest is read, job_end sent, the spool emptied, within 2 s; a SIGTERM from the
#    step's root (Slurm signalling the step) is not a stop; the root's end is;
#  - a second collector starts after the first one's bytes, and delivers batches left by earlier
#    steps, also one claimed by a collector that is gone; its log rotates at 1 MiB.
# Skips (77) only where munged, unmunge or python3 is missing, or dlsched-collect was not built.
set -u
top="$(cd "${srcdir:-.}" && pwd)"
build="$(pwd)"
collect="$build/plugins/spank/dlsched/collect/dlsched-collect"
progress="$build/contribs/progress/dlsched-progress"
receiver="$top/testsuite/progress/receiver.py"
munged=$(command -v munged 2>/dev/null || echo /usr/sbin/munged)
if [ ! -x "$munged" ] || ! command -v unmunge >/dev/null; then
	echo "SKIP: munged or unmunge not installed (apt-get install munge)"
	exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
[ -x "$collect" ] || { echo "SKIP: dlsched-collect not built (configure found no libcurl or munge: libcurl4-openssl-dev, libmunge-dev)"; exit 77; }
[ -x "$progress" ] || { echo "Bail out! $progress not built"; exit 1; }

tmp=$(mktemp -d /tmp/dlsched-collect-test.XXXXXX)
chmod 755 "$tmp"
fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
pids=()
cleanup() {
	{ echo exit >&5; } 2>/dev/null  # ends the pretend step's task
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -f "$tmp/m/pid" ] && kill "$(cat "$tmp/m/pid")" 2>/dev/null
	if [ $fails -eq 0 ]; then rm -rf "$tmp"; else echo "files kept in $tmp"; fi
}
trap cleanup EXIT
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds
	local n=$(($1 * 10))
	shift
	while [ $n -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
	return 1
}

# ---- a private munged, the receiver ----
mkdir -p "$tmp/m" "$tmp/r"
dd if=/dev/urandom of="$tmp/m/key" bs=1024 count=1 2>/dev/null
chmod 600 "$tmp/m/key"
"$munged" --socket="$tmp/m/sock" --key-file="$tmp/m/key" --pid-file="$tmp/m/pid" --log-file="$tmp/m/log" \
	--seed-file="$tmp/m/seed" || { echo "Bail out! munged did not start: $(cat "$tmp/m/log" 2>/dev/null)"; exit 1; }
wait_for 5 test -S "$tmp/m/sock" || { echo "Bail out! no munged socket"; exit 1; }
receiver_pid=
start_receiver() {  # start_receiver [PORT]
	rm -f "$tmp/r/port"
	python3 "$receiver" --dir "$tmp/r" --munge-socket "$tmp/m/sock" --port "${1:-0}" >>"$tmp/r/out" 2>&1 &
	receiver_pid=$!
	pids+=("$receiver_pid")
	wait_for 10 test -s "$tmp/r/port" || { echo "Bail out! receiver did not start: $(cat "$tmp/r/out")"; exit 1; }
}
start_receiver
port=$(cat "$tmp/r/port")
mode() { echo "$1" >"$tmp/r/mode"; }
mode 200

# requests.jsonl, one line per request: "STATUS type[:epoch|:kind] ..." (python3 reads the JSON).
summary() {
	python3 - "$tmp/r/requests.jsonl" <<'PY'
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for l in lines:
    e = json.loads(l)
    recs = (e.get("batch") or {}).get("records", [])
    out = []
    for r in recs:
        t = r["type"]
        if t == "epoch": t += ":%d" % r["epoch"]
        elif t == "checkpoint": t += ":" + r["kind"]
        elif t == "job_end": t += ":" + r["state"]
        out.append(t)
    print(e["status"], " ".join(out))
PY
}
# The records delivered (200), in order: "job epoch:1 ...".
delivered() { summary | awk '$1 == 200 { $1 = ""; printf "%s", $0 }' | sed 's/^ //'; }
field() {  # field EPOCH KEY: KEY of the delivered epoch record EPOCH
	python3 - "$tmp/r/requests.jsonl" "$1" "$2" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["status"] != 200: continue
    for r in e["batch"]["records"]:
        if r["type"] == "epoch" and r["epoch"] == int(sys.argv[2]):
            print(r[sys.argv[3]])
PY
}

# ---- the pretend step: root (python) -> a shell running commands from a fifo ----
uid=$(id -u)
spool="$tmp/spool"
mkdir -p "$spool/$uid/run"
chmod 700 "$spool/$uid" "$spool/$uid/run"
pf="$spool/$uid/run/42.batch.progress"
: >"$pf"
mkfifo "$tmp/cmd"
cat >"$tmp/root.py" <<'PY'
import os, signal, subprocess, sys
# Like slurmstepd: the parent of the task; on SIGUSR1 it sends SIGTERM to the collector with kill(2).
def forward(signum, frame):
    with open(sys.argv[2]) as f:
        os.kill(int(f.read()), signal.SIGTERM)
signal.signal(signal.SIGUSR1, forward)
task = subprocess.Popen(["bash", "-c", 'exec 3<>"$0"; while read -r c <&3; do eval "$c"; done', sys.argv[1]])
while True:
    try:
        sys.exit(task.wait())
    except InterruptedError:
        pass
PY
python3 "$tmp/root.py" "$tmp/cmd" "$tmp/collector.pid" &
root=$!
pids+=("$root")
exec 5>"$tmp/cmd"
step() { echo "$*" >&5; }
step "export DLSCHED_PROTOCOL=1 DLSCHED_PROGRESS_FILE=$pf"
head -c 4000000 /dev/urandom >"$tmp/data"
size=4000000

start_collector() {  # start_collector ROOT RUN [more options]
	local r="$1" run="$2" offset
	shift 2
	offset=$(stat -c %s "$pf")  # (not inside the background command: the step may write meanwhile)
	"$collect" --job-id 42 --step batch --progress "$pf" --progress-offset "$offset" \
		--spool "$spool" --ingest "http://127.0.0.1:$port/" --munge-socket "$tmp/m/sock" --interval 1 \
		--root-pid "$r" --cluster testc --node n7 --run "$run" --gpus 4 --nodes 1 --model resnet50 \
		--epochs-total 6 "$@" &
	collector=$!
	pids+=("$collector")
	echo "$collector" >"$tmp/collector.pid"
}
start_collector "$root" 0
log="$spool/$uid/collect.log"
wait_for 5 grep -qs started "$log" || ko "collector did not start: $(cat "$log" 2>/dev/null)"

# ---- epochs with what the step read ----
step "cat $tmp/data >/dev/null; $progress epoch 1"
wait_for 5 grep -q '"epoch":1' "$pf"
# Epoch 1's counters are read when the collector reads its line: wait until it has been delivered,
# or, on a loaded machine, the next step's reading would count in epoch 1.
wait_for 10 grep -Eq '"epoch": 1[,}]' "$tmp/r/requests.jsonl"
step "cat $tmp/data $tmp/data >/dev/null; echo 'not json' >>$pf; $progress epoch 2"
wait_for 5 grep -q '"epoch":2' "$pf"
step "$progress checkpoint save --epoch 2 --bytes 1000 --seconds 0.25"
wait_for 6 grep -q '"type": "checkpoint"' "$tmp/r/requests.jsonl"
got=$(delivered)
[ "$got" = "job epoch:1 epoch:2 checkpoint:save" ] && ok "records arrive in order: $got" || ko "delivered: '$got'"
statuses=$(summary | awk '{ print $1 }' | sort -u | tr '\n' ' ')
[ "$statuses" = "200 " ] && ok "every credential decoded (no 401: a fresh one per request)" || ko "statuses: $statuses"
uids=$(python3 -c 'import json,sys; print(" ".join(sorted({str(json.loads(l)["uid"]) for l in open(sys.argv[1])})))' "$tmp/r/requests.jsonl")
[ "$uids" = "$uid" ] && ok "credentials carry the collector's uid ($uid)" || ko "uids: $uids"
head=$(python3 -c 'import json,sys; b=json.loads(open(sys.argv[1]).readline())["batch"]; print(b["v"], b["cluster"], b["job_id"], b["step"], b["node"], b["run"], b["records"][0])' "$tmp/r/requests.jsonl")
[[ "$head" == "1 testc 42 batch n7 0 {'type': 'job', 'gpus': 4, 'nodes': 1, 'start': "*", 'model': 'resnet50', 'epochs_total': 6"* ]] &&
	ok "batch header and job record: $head" || ko "first batch: $head"
b1=$(field 1 bytes_read)
b2=$(field 2 bytes_read)
[ -n "$b1" ] && [ "$b1" -ge $size ] && [ "$b1" -le $((size + 262144)) ] &&
	ok "epoch 1: bytes_read $b1 (the step read $size)" || ko "epoch 1 bytes_read '$b1', the step read $size"
[ -n "$b2" ] && [ "$b2" -ge $((2 * size)) ] && [ "$b2" -le $((2 * size + 262144)) ] &&
	ok "epoch 2: bytes_read $b2 (the step read $((2 * size)))" || ko "epoch 2 bytes_read '$b2', the step read $((2 * size))"
nfs=$(field 1 nfs_read_bytes)
if grep -qE 'fstype nfs4? ' /proc/self/mountstats 2>/dev/null; then
	[ "${nfs:--1}" -ge 0 ] && ok "nfs_read_bytes measured ($nfs)" || ko "nfs_read_bytes '$nfs' with NFS mounted"
else
	[ "$nfs" = "-1" ] && ok "nfs_read_bytes -1 without an NFS mount" || ko "nfs_read_bytes '$nfs' without NFS"
fi
net=$(field 1 net_rx_bytes)
[[ "$net" =~ ^-?[0-9]+$ ]] && [ "$net" -ge -1 ] && ok "net_rx_bytes present ($net)" || ko "net_rx_bytes '$net'"
grep -q "progress line .* skipped: not JSON" "$log" && ok "a bad line is logged and skipped" || ko "no bad-line message in the log"

# ---- the service down: the spool keeps the batches, then delivers them in order ----
kill "$receiver_pid"; wait "$receiver_pid" 2>/dev/null
step "$progress epoch 3"
sleep 0.3
step "$progress checkpoint save --epoch 3 --bytes 1000 --seconds 0.25"
wait_for 6 grep -q "cannot deliver" "$log" && ok "service down: logged ($(grep "cannot deliver" "$log" | tail -n1 | sed 's/.*: cannot/cannot/' | cut -c1-90)...)" ||
	ko "no delivery failure in the log"
sleep 1.5
spooled=$(find "$spool/$uid" -maxdepth 1 -name '*.json' | wc -l)
[ "$spooled" -ge 1 ] && ok "service down: $spooled batch(es) wait in the spool" || ko "nothing spooled while the service was down"
start_receiver "$port"
wait_for 20 sh -c "[ -z \"\$(find '$spool/$uid' -maxdepth 1 -name '*.json*')\" ]" &&
	ok "service back: the spool is empty" || ko "still spooled: $(ls "$spool/$uid")"
got=$(delivered)
[ "$got" = "job epoch:1 epoch:2 checkpoint:save epoch:3 checkpoint:save" ] && ok "delivered in order after the outage" ||
	ko "delivered: '$got'"

# ---- 503 is retried; 403 is final: rejected/ with the answer ----
mode 503
step "$progress epoch 4"
saw_503() { summary | grep -q '^503 '; }
wait_for 6 saw_503 && ok "503 answered" || ko "no 503 request: $(summary | tail -n2)"
[ -n "$(find "$spool/$uid" -maxdepth 1 -name '*.json*')" ] && ok "503: the batch stays in the spool" || ko "503: batch gone"
mode 200
wait_for 10 sh -c "[ -z \"\$(find '$spool/$uid' -maxdepth 1 -name '*.json*')\" ]" && [[ "$(delivered)" == *"epoch:3 checkpoint:save epoch:4" ]] &&
	ok "after 503, the batch is delivered" || ko "after 503: $(delivered)"
mode 403
step "$progress epoch 5"
wait_for 6 sh -c "ls '$spool/$uid/rejected/' 2>/dev/null | grep -q 'json.answer\$'" && ok "403: moved to rejected/" ||
	ko "403: rejected/ has: $(ls "$spool/$uid/rejected" 2>/dev/null)"
ans=$(cat "$spool/$uid"/rejected/*.answer 2>/dev/null | head -n2 | tr '\n' ' ')
[[ "$ans" == "HTTP 403 "*"told to answer 403"* ]] && ok "the answer is kept beside it: $ans" || ko "answer: '$ans'"
[ "$(find "$spool/$uid/rejected" -name '*.json' | wc -l)" -eq 1 ] && ok "one batch rejected" || ko "rejected: $(ls "$spool/$uid/rejected")"
# rejected/ is bounded on its own (not by the cap, which refused batches would fill for good): 70
# older refused batches, then one more refusal: the newest 64 stay, the new one among them.
for k in $(seq 100 169); do
	echo '{}' >"$spool/$uid/rejected/0000000000$k-1-batch-0.json"
	echo 'HTTP 403' >"$spool/$uid/rejected/0000000000$k-1-batch-0.json.answer"
done
step "$progress checkpoint save --epoch 5 --bytes 1000 --seconds 0.25"
pruned() { [ "$(find "$spool/$uid/rejected" -name '*.json' | wc -l)" -eq 64 ]; }
wait_for 6 pruned && [ ! -e "$spool/$uid/rejected/0000000000100-1-batch-0.json.answer" ] &&
	[ "$(find "$spool/$uid/rejected" -name '*.json' -newer "$spool/$uid/rejected/0000000000169-1-batch-0.json" | wc -l)" -ge 1 ] &&
	ok "rejected/ keeps the newest 64 refused batches (the oldest and their answers removed)" ||
	ko "rejected/ after 71 refusals: $(find "$spool/$uid/rejected" -name '*.json' | wc -l) batches"
mode 200

# ---- SIGTERM from the step's root is Slurm signalling the step: not a stop ----
kill -USR1 "$root"
wait_for 3 grep -q "SIGTERM from the step.s root" "$log" && kill -0 "$collector" 2>/dev/null &&
	ok "SIGTERM from the root (kill(2)): logged, still running" || ko "root's SIGTERM: $(tail -n2 "$log")"

# ---- SIGTERM: the rest is read, job_end sent, all within 2 s ----
step "$progress epoch 6"
wait_for 3 grep -q '"epoch":6' "$pf"
t0=$(date +%s%N)
kill -TERM "$collector"
wait "$collector"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc -eq 0 ] && [ $ms -lt 2000 ] && ok "SIGTERM: exit 0 in $ms ms" || ko "SIGTERM: rc $rc after $ms ms"
got=$(delivered)
[[ "$got" == *"epoch:4 epoch:6 job_end:completed" ]] && ok "the last epoch and job_end:completed delivered (6 of 6 epochs)" ||
	ko "delivered at the end: $got"
[ -z "$(find "$spool/$uid" -maxdepth 1 -name '*.json*')" ] && ok "the spool is empty" || ko "left: $(ls "$spool/$uid")"

# ---- the next run: starts after the old lines; delivers leftovers; stops when its root ends ----
mv "$tmp/r/requests.jsonl" "$tmp/r/run0.jsonl"
# Left by earlier steps: one waiting, one claimed by a collector that is gone (pid 2^22+1 is unused).
old1="$spool/$uid/0000000000000000001-41-batch-000001.json"
old2="$spool/$uid/0000000000000000002-41-3-000001.json"
echo '{"v":1,"cluster":"testc","job_id":41,"step":"batch","node":"n7","run":0,"records":[{"type":"job","gpus":1,"nodes":1,"start":1732350000.0}]}' >"$old1"
echo '{"v":1,"cluster":"testc","job_id":41,"step":"3","node":"n7","run":0,"records":[{"type":"job_end","end":1732350100.0,"state":"failed"}]}' >"$old2.claimed.4194305"
kill -0 4194305 2>/dev/null && ko "pid 4194305 exists: the dead-claim check is meaningless here"
# A log past 1 MiB is rotated to collect.log.1 by the next line.
head -c 1100000 /dev/zero | tr '\0' 'x' >>"$log"
sleep 2 &
root2=$!
start_collector "$root2" 1
step "$progress checkpoint load --epoch 6 --bytes 1000 --seconds 0.1"
sleep 0.2
step "$progress checkpoint save --epoch 6.5 --bytes 1000 --seconds 0.1"
wait "$root2"
wait_for 3 sh -c "! kill -0 $collector 2>/dev/null" && ok "the root's end stops the collector" || ko "collector still running after its root ended"
wait "$collector" 2>/dev/null
[ -f "$log.1" ] && [ "$(stat -c %s "$log")" -lt 100000 ] && grep -q "started: run 1" "$log" &&
	ok "collect.log rotated at 1 MiB" || ko "log: $(ls -l "$log"*)"
grep -q "took back 0000000000000000002-41-3-000001.json from collector 4194305" "$log" &&
	ok "a claim of a collector that is gone is taken back" || ko "no take-back in the log"
new=$(delivered)
[ "$new" = "job job_end:failed job checkpoint:load checkpoint:save job_end:checkpointed" ] &&
	ok "run 1: leftovers first (oldest first), then its own records, none of run 0 again: $new" || ko "run 1 delivered: '$new'"
run1=$(python3 -c 'import json,sys; print(sorted({json.loads(l)["batch"]["run"] for l in open(sys.argv[1]) if json.loads(l)["batch"]["job_id"] == 42}))' "$tmp/r/requests.jsonl")
[ "$run1" = "[1]" ] && ok "run 1's batches say run 1" || ko "runs: $run1"
[ -z "$(find "$spool/$uid" -maxdepth 1 -name '*.json*')" ] && ok "the spool is empty again" || ko "left: $(ls "$spool/$uid")"

# ---- the spool refused under a directory others may write (no link followed, no 1777 base) ----
mkdir -m 777 "$tmp/open"
mkdir -p "$tmp/open/spool"
"$collect" --job-id 43 --step batch --progress "$pf" --spool "$tmp/open/spool" --ingest "http://127.0.0.1:$port/" \
	--munge-socket "$tmp/m/sock" --log - >"$tmp/open.out" 2>&1
grep -q "open may be written by others (mode 0777)" "$tmp/open.out" && ok "a spool under a world-writable directory is refused" ||
	ko "world-writable ancestor: $(cat "$tmp/open.out")"
mkdir -p "$tmp/ln/spool" "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$tmp/ln/spool/$uid"
"$collect" --job-id 43 --step batch --progress "$pf" --spool "$tmp/ln/spool" --ingest "http://127.0.0.1:$port/" \
	--munge-socket "$tmp/m/sock" --log - >"$tmp/ln.out" 2>&1
grep -q "ln/spool/$uid: .*(not a directory: a link or a file" "$tmp/ln.out" && [ ! -e "$tmp/elsewhere/rejected" ] &&
	ok "a user directory that is a symbolic link is refused, nothing made through it" || ko "symlink: $(cat "$tmp/ln.out")"

# ---- a full disk (a 256 KiB tmpfs): records wait in memory, none lost, delivered once there is room ----
if [ "$(id -u)" -eq 0 ] && mkdir -p "$tmp/small" && mount -t tmpfs -o size=256k,mode=755 tmpfs "$tmp/small" 2>/dev/null; then
	mkdir -p "$tmp/small/spool/$uid/rejected"
	pf2="$tmp/50.batch.progress"
	: >"$pf2"
	mv "$tmp/r/requests.jsonl" "$tmp/r/run1.jsonl"
	head -c 1000000 /dev/zero >"$tmp/small/filler" 2>/dev/null
	sleep 30 &
	root3=$!
	"$collect" --job-id 50 --step batch --progress "$pf2" --spool "$tmp/small/spool" --ingest "http://127.0.0.1:$port/" \
		--munge-socket "$tmp/m/sock" --interval 0.5 --root-pid $root3 --cluster testc --node n7 --gpus 1 --log "$tmp/full.log" &
	c3=$!
	pids+=("$c3" "$root3")
	for e in 1 2 3; do DLSCHED_PROTOCOL=1 DLSCHED_PROGRESS_FILE="$pf2" "$progress" epoch $e; done
	wait_for 5 grep -qs "wait in memory" "$tmp/full.log" && grep -q "No space left on device" "$tmp/full.log" &&
		ok "disk full: logged, the records wait in memory" || ko "disk full: $(cat "$tmp/full.log")"
	rm -f "$tmp/small/filler"
	wait_for 10 sh -c "grep -q '\"epoch\": 3' '$tmp/r/requests.jsonl' 2>/dev/null" && grep -q "are in the spool now" "$tmp/full.log" &&
		ok "room again: the records that waited are delivered" || ko "after the disk full: $(summary | tr '\n' ' ')"
	got=$(summary | awk '$1 == 200' | grep -o 'epoch:[0-9]' | tr '\n' ' ')
	[ "$got" = "epoch:1 epoch:2 epoch:3 " ] && ok "all three epochs, in order, none lost" || ko "delivered after the full disk: '$got'"
	kill -TERM $c3 2>/dev/null; wait $c3 2>/dev/null; kill $root3 2>/dev/null
	umount "$tmp/small"
else
	echo "# SKIP: the full-disk check needs root and tmpfs"
fi

# ---- the per-user cap (--spool-max, spool_max= in plugstack.conf): past it nothing more is
# written, the records wait in memory (logged), and go to the spool once deliveries make room ----
mv "$tmp/r/requests.jsonl" "$tmp/r/before-cap.jsonl" 2>/dev/null
mode 503
pf3="$tmp/51.batch.progress"
: >"$pf3"
sleep 60 &
root4=$!
"$collect" --job-id 51 --step batch --progress "$pf3" --spool "$tmp/capspool" --spool-max 1200 \
	--ingest "http://127.0.0.1:$port/" --munge-socket "$tmp/m/sock" --interval 0.3 --root-pid $root4 \
	--cluster testc --node n7 --gpus 1 --log "$tmp/cap.log" &
c4=$!
pids+=("$c4" "$root4")
wait_for 5 grep -qs started "$tmp/cap.log" || ko "capped collector did not start: $(cat "$tmp/cap.log" 2>/dev/null)"
for e in 1 2 3 4 5 6 7 8; do
	DLSCHED_PROTOCOL=1 DLSCHED_PROGRESS_FILE="$pf3" "$progress" epoch $e
	sleep 0.4
done
spooled_bytes() { find "$tmp/capspool/$uid" -name '*.json*' -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }'; }
wait_for 5 grep -q "would pass its cap of 1200" "$tmp/cap.log" && grep -q "records wait in memory" "$tmp/cap.log" &&
	ok "the cap reached: logged, the records wait in memory ($(grep -c . "$tmp/cap.log") log lines)" ||
	ko "spool cap: $(cat "$tmp/cap.log")"
[ "$(grep -c "would pass its cap" "$tmp/cap.log")" -eq 1 ] && ok "the cap is logged once, not at every batch" ||
	ko "cap logged $(grep -c "would pass its cap" "$tmp/cap.log") times"
used=$(spooled_bytes)
[ "$used" -le 1200 ] && [ "$used" -gt 0 ] && ok "the spool holds $used bytes, under the cap of 1200" ||
	ko "the spool holds $used bytes (cap 1200): $(ls -l "$tmp/capspool/$uid")"
mode 200
cap_done() { [ "$(summary | awk '$1 == 200' | grep -o 'epoch:[0-9]' | tr '\n' ' ')" = "epoch:1 epoch:2 epoch:3 epoch:4 epoch:5 epoch:6 epoch:7 epoch:8 " ]; }
wait_for 40 cap_done && ok "room again: all eight epochs delivered, in order, none lost" ||
	ko "after the cap: $(summary | awk '$1 == 200' | tr '\n' ' ')"
grep -q "has room again" "$tmp/cap.log" && grep -q "waited in memory are in the spool now" "$tmp/cap.log" &&
	ok "the log says when the spool had room again" || ko "no room-again lines: $(cat "$tmp/cap.log")"
kill -TERM $c4 2>/dev/null; wait $c4 2>/dev/null; kill $root4 2>/dev/null

[ $fails -eq 0 ] || { echo "$fails check(s) failed; collector log:"; cat "$log"; exit 1; }
exit 0
