#!/usr/bin/env bash
# The training job's helpers (doc/protocol.md, section 1): dlsched-progress and the Python module
# dlsched_progress write the exact same lines into DLSCHED_PROGRESS_FILE; only rank 0 writes;
# outside dlsched they do nothing and succeed; bad arguments are refused (exit 2 / ValueError) with
# a message, and nothing is written; concurrent reporters never interleave their lines.
set -u
top="$(cd "${srcdir:-.}" && pwd)"
build="$(pwd)"
prog="$build/contribs/progress/dlsched-progress"
py="$top/contribs/progress/dlsched_progress.py"
[ -x "$prog" ] || { echo "Bail out! $prog not built (make)"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }

tmp=$(mktemp -d /tmp/dlsched-progress-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }
pf="$tmp/progress"
unset DLSCHED_PROTOCOL DLSCHED_PROGRESS_FILE SLURM_PROCID RANK DLSCHED_CHECKPOINT_SIGNAL DLSCHED_RESTART DLSCHED_GPUS
run() { DLSCHED_PROTOCOL=1 DLSCHED_PROGRESS_FILE="$pf" "$prog" "$@"; }
last() { tail -n1 "$pf" 2>/dev/null; }
lines() { if [ -f "$pf" ]; then wc -l <"$pf"; else echo 0; fi; }
now=$(date +%s)

# ---- outside dlsched: nothing written, success ----
DLSCHED_PROGRESS_FILE="$pf" "$prog" epoch 1 && [ ! -e "$pf" ] &&
	ok "without DLSCHED_PROTOCOL: exit 0, nothing written" || ko "without DLSCHED_PROTOCOL"
out=$(DLSCHED_PROTOCOL=2 DLSCHED_PROGRESS_FILE="$pf" "$prog" epoch 1 2>&1); rc=$?
[ $rc -eq 0 ] && [ ! -e "$pf" ] && [[ "$out" == *"speaks version 1"* ]] &&
	ok "DLSCHED_PROTOCOL=2: exit 0, a warning, nothing written" || ko "protocol 2: rc $rc, '$out'"

# ---- the exact lines ----
check_line() {  # check_line WHAT EXPECTED-REGEX
	if [[ "$(last)" =~ ^$2$ ]]; then ok "$1"; else ko "$1: got '$(last)', want /$2/"; fi
}
run epoch 3 --start 1732350000.12 --end 1732350061.8
check_line "epoch with start and end" '\{"v":1,"event":"epoch","epoch":3,"start":1732350000\.120000,"end":1732350061\.800000\}'
run epoch 4 --end=1732350100
check_line "epoch with end only (--end=T)" '\{"v":1,"event":"epoch","epoch":4,"end":1732350100\.000000\}'
run epoch 5
check_line "epoch without times: end is now" '\{"v":1,"event":"epoch","epoch":5,"end":1[0-9]{9}\.[0-9]{6}\}'
end=$(last | sed 's/.*"end":\([0-9]*\).*/\1/')
[ $((end - now)) -ge -1 ] && [ $((end - now)) -le 5 ] && ok "its end is the current time" || ko "end $end, now $now"
run checkpoint save --epoch 3.5 --bytes 102760448 --seconds 1.84
check_line "checkpoint save" '\{"v":1,"event":"checkpoint","kind":"save","epoch":3\.5,"bytes":102760448,"seconds":1\.840000,"at":1[0-9]{9}\.[0-9]{6}\}'
head -c 12345 /dev/zero >"$tmp/ckpt"
run checkpoint load --epoch 3 --file "$tmp/ckpt" --seconds=0.92
check_line "checkpoint load --file: the file's size" '\{"v":1,"event":"checkpoint","kind":"load","epoch":3,"bytes":12345,"seconds":0\.920000,"at":1[0-9]{9}\.[0-9]{6}\}'
mkdir -p "$tmp/shards/a"
head -c 100 /dev/zero >"$tmp/shards/x"
head -c 23 /dev/zero >"$tmp/shards/a/y"
run checkpoint save --epoch 4 --file "$tmp/shards" --seconds 0
check_line "checkpoint --file DIR: the sum of its files" '\{"v":1,"event":"checkpoint","kind":"save","epoch":4,"bytes":123,"seconds":0\.000000,"at":.*\}'
[ "$(lines)" -eq 6 ] && ok "one line per report" || ko "$(lines) lines for 6 reports"

# ---- only rank 0 writes ----
n=$(lines)
SLURM_PROCID=1 run epoch 9; RANK=2 run epoch 9; SLURM_PROCID=0 RANK=3 run epoch 9
[ "$(lines)" -eq "$n" ] && ok "ranks other than 0 write nothing (SLURM_PROCID=1, RANK=2, SLURM_PROCID=0 RANK=3)" ||
	ko "a rank other than 0 wrote: $(last)"
SLURM_PROCID=0 RANK=0 run epoch 9
[ "$(lines)" -eq $((n + 1)) ] && ok "SLURM_PROCID=0 RANK=0 writes" || ko "rank 0 wrote nothing"

# ---- bad arguments: exit 2, a message, nothing written ----
n=$(lines)
bad() {  # bad MESSAGE-PART ARGS...
	local want="$1" out rc
	shift
	out=$(run "$@" 2>&1); rc=$?
	if [ $rc -eq 2 ] && [[ "$out" == *"$want"* ]]; then ok "refused: $* ($want)"; else ko "'$*': rc $rc, '$out'"; fi
}
bad "epoch or checkpoint"
bad "report an epoch or a checkpoint" epochs 3
bad "which epoch" epoch
bad "whole number from 1" epoch 0
bad "whole number from 1" epoch 2.5
bad "whole number from 1" epoch 0x10
bad "not a number" epoch 3 --end soon
bad "not a plausible time" epoch 3 --end 12
bad "is after --end" epoch 3 --start 1732350070 --end 1732350061
bad "needs a value" epoch 3 --end
bad "unknown argument" epoch 3 --begin 1732350061
bad "save or load" checkpoint store --epoch 1 --bytes 1 --seconds 1
bad "--epoch E is missing" checkpoint save --bytes 1 --seconds 1
bad "--bytes B or --file PATH is missing" checkpoint save --epoch 1 --seconds 1
bad "--seconds S is missing" checkpoint save --epoch 1 --bytes 1
bad "once" checkpoint save --epoch 1 --bytes 1 --file "$tmp/ckpt" --seconds 1
bad "a whole number" checkpoint save --epoch 1 --bytes 1.5 --seconds 1
bad "No such file" checkpoint save --epoch 1 --file "$tmp/none" --seconds 1
bad "from 0 to" checkpoint load --epoch -1 --bytes 1 --seconds 1
bad "time it took" checkpoint load --epoch 1 --bytes 1 --seconds nan
out=$(DLSCHED_PROGRESS_FILE="$pf" "$prog" epoch 0 2>&1); rc=$?
[ $rc -eq 2 ] && ok "bad arguments are refused outside dlsched too" || ko "outside dlsched: epoch 0 gave $rc"
[ "$(lines)" -eq "$n" ] && ok "nothing written by refused reports" || ko "refused reports wrote: $(last)"
out=$(DLSCHED_PROTOCOL=1 DLSCHED_PROGRESS_FILE="$tmp/no/such/dir/f" "$prog" epoch 1 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$out" == *"cannot open"* ]] && ok "an unwritable progress file: exit 1 with the reason" ||
	ko "unwritable file: rc $rc, '$out'"

# ---- concurrent reporters: whole lines only ----
: >"$pf"
for w in 1 2 3 4 5 6 7 8; do
	(for i in $(seq 1 50); do run checkpoint save --epoch "$w" --bytes "$i" --seconds 0.1; done) &
done
wait
good=$(grep -cE '^\{"v":1,"event":"checkpoint","kind":"save","epoch":[1-8],"bytes":[0-9]+,"seconds":0\.100000,"at":[0-9.]+\}$' "$pf")
[ "$(lines)" -eq 400 ] && [ "$good" -eq 400 ] && ok "8 concurrent writers x 50 reports: 400 whole lines" ||
	ko "concurrent writers: $(lines) lines, $good well-formed"

# ---- the Python helper writes the same lines ----
: >"$pf"
cat >"$tmp/t.py" <<'PY'
import os, signal, sys, time
sys.path.insert(0, os.environ["PYDIR"])
import dlsched_progress as dp
fails = 0
def check(what, cond):
    global fails
    print(("ok - " if cond else "not ok - ") + what)
    fails += 0 if cond else 1
def last():
    with open(os.environ["PF"]) as f:
        lines = f.read().splitlines()
    return lines[-1] if lines else ""
def lines():
    with open(os.environ["PF"]) as f:
        return len(f.read().splitlines())

env = dict(os.environ)
os.environ.pop("DLSCHED_PROTOCOL", None)
check("python: outside dlsched epoch_done() returns False, writes nothing",
      dp.epoch_done(1) is False and lines() == 0)
os.environ["DLSCHED_PROTOCOL"] = "1"
check("python: epoch_done(3, start, end)", dp.epoch_done(3, start=1732350000.12, end=1732350061.8) and
      last() == '{"v":1,"event":"epoch","epoch":3,"start":1732350000.120000,"end":1732350061.800000}')
dp.epoch_done(4, end=1732350100)
check("python: epoch_done(4, end=...)", last() == '{"v":1,"event":"epoch","epoch":4,"end":1732350100.000000}')
dp.checkpoint_saved(3.5, 102760448, 1.84)
l = last()
check("python: checkpoint_saved(3.5, 102760448, 1.84): " + l,
      l.startswith('{"v":1,"event":"checkpoint","kind":"save","epoch":3.5,"bytes":102760448,"seconds":1.840000,"at":')
      and abs(float(l.rsplit(":", 1)[1].rstrip("}")) - time.time()) < 5)
dp.checkpoint_loaded(3, os.environ["CKPT"], 0.92)
check("python: checkpoint_loaded(3, path, 0.92): the file's size",
      last().startswith('{"v":1,"event":"checkpoint","kind":"load","epoch":3,"bytes":12345,"seconds":0.920000,"at":'))
path = os.path.join(os.environ["TMPDIR_T"], "saved.pt")
with dp.saving(path, 5):
    with open(path, "wb") as f:
        f.write(b"x" * 4096)
    time.sleep(0.2)
l = last()
secs = float(l.split('"seconds":')[1].split(",")[0])
check("python: saving(path, 5) reports the size and the time: " + l,
      '"kind":"save","epoch":5,"bytes":4096,' in l and 0.2 <= secs < 2)
n = lines()
try:
    with dp.saving(path, 6):
        raise RuntimeError("disk full")
except RuntimeError:
    pass
check("python: a save that raises is not reported", lines() == n)
os.environ["SLURM_PROCID"] = "1"
check("python: SLURM_PROCID=1 writes nothing", dp.epoch_done(7) is False and lines() == n)
os.environ["SLURM_PROCID"] = "0"; os.environ["RANK"] = "2"
check("python: RANK=2 writes nothing", dp.epoch_done(7) is False and lines() == n)
del os.environ["SLURM_PROCID"]; del os.environ["RANK"]
for args, kw in [((0,), {}), ((2.5,), {}), (("3",), {}), ((True,), {}), ((3,), {"end": 12}),
                 ((3,), {"start": 1732350070, "end": 1732350061})]:
    try:
        dp.epoch_done(*args, **kw)
        check("python: epoch_done%r %r refused" % (args, kw), False)
    except ValueError:
        check("python: epoch_done%r %r raises ValueError" % (args, kw), True)
for args in [(-1, 1, 1), (1, -1, 1), (1, 1.5, 1), (1, 1, float("nan")), (1, "/no/such/file", 1)]:
    try:
        dp.checkpoint_saved(*args)
        check("python: checkpoint_saved%r refused" % (args,), False)
    except ValueError:
        check("python: checkpoint_saved%r raises ValueError" % (args,), True)
check("python: nothing written by refused reports", lines() == n)

dp.install_checkpoint_handler()
check("python: no request before the signal", not dp.checkpoint_requested())
os.kill(os.getpid(), signal.SIGUSR1)
time.sleep(0.05)
check("python: SIGUSR1 requests a checkpoint", dp.checkpoint_requested())
dp._requested = False
os.environ["DLSCHED_CHECKPOINT_SIGNAL"] = "USR2"
dp.install_checkpoint_handler()
os.kill(os.getpid(), signal.SIGUSR2)
time.sleep(0.05)
check("python: DLSCHED_CHECKPOINT_SIGNAL=USR2 is caught", dp.checkpoint_requested())
dp._requested = False
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(0.05)
check("python: SIGTERM requests a checkpoint too", dp.checkpoint_requested())

os.environ.update({"DLSCHED_RESTART": "2", "DLSCHED_GPUS": "8", "DLSCHED_CHECKPOINT_DIR": "/ck", "DLSCHED_EPOCHS": "90"})
check("python: restart_count(), gpus(), checkpoint_dir(), epochs_total()",
      dp.restart_count() == 2 and dp.gpus() == 8 and dp.checkpoint_dir() == "/ck" and dp.epochs_total() == 90)
for k in ("DLSCHED_RESTART", "DLSCHED_GPUS", "DLSCHED_CHECKPOINT_DIR"):
    del os.environ[k]
check("python: outside dlsched restart_count() is 0, gpus() and checkpoint_dir() None",
      dp.restart_count() == 0 and dp.gpus() is None and dp.checkpoint_dir() is None)
check("python: last_reported_epoch() is 4, resume_epoch() 5 (the last save)",
      dp.last_reported_epoch() == 4 and dp.resume_epoch() == 5)
os.environ["DLSCHED_PROGRESS_FILE"] = "/no/such/file"
check("python: without a progress file they are 0", dp.last_reported_epoch() == 0 and dp.resume_epoch() == 0)
os.environ["DLSCHED_PROGRESS_FILE"] = "/no/such/dir/file"
check("python: an unwritable progress file returns False, never raises", dp.epoch_done(9) is False)
sys.exit(1 if fails else 0)
PY
out=$(PYDIR="$(dirname "$py")" PF="$pf" CKPT="$tmp/ckpt" TMPDIR_T="$tmp" DLSCHED_PROGRESS_FILE="$pf" python3 "$tmp/t.py" 2>"$tmp/py.err")
rc=$?
echo "$out"
fails=$((fails + $(echo "$out" | grep -c '^not ok')))
[ $rc -eq 0 ] || [ "$(echo "$out" | grep -c '^not ok')" -gt 0 ] || ko "python test died: $(tail -n5 "$tmp/py.err")"
# The same report from both helpers, byte for byte.
: >"$pf"
run epoch 12 --start 1732350000.5 --end 1732350061.25
DLSCHED_PROTOCOL=1 DLSCHED_PROGRESS_FILE="$pf" PYTHONPATH="$(dirname "$py")" python3 -c \
	'import dlsched_progress as dp; dp.epoch_done(12, start=1732350000.5, end=1732350061.25)'
[ "$(sed -n 1p "$pf")" = "$(sed -n 2p "$pf")" ] && ok "C and Python helpers write the same line" ||
	ko "C: $(sed -n 1p "$pf") Python: $(sed -n 2p "$pf")"

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
exit 0
