"""dlsched_progress: the training-job protocol of dlsched, for Python jobs (standard library only).

A job running under Slurm with spank/dlsched reports epoch boundaries and checkpoints, honours
the checkpoint request and resumes after a requeue (doc/protocol.md, section 1; dlsched-protocol(7)):

    import dlsched_progress as dp
    dp.install_checkpoint_handler()          # the checkpoint signal and SIGTERM set a flag
    start = dp.resume_epoch()                # or the epoch kept in your own checkpoint
    for epoch in range(start + 1, epochs + 1):
        ...train one epoch...
        dp.epoch_done(epoch)
        if dp.checkpoint_requested():
            with dp.saving(path, epoch):     # times the save, reports its size
                torch.save(state, path)
            sys.exit(0)

Outside dlsched (DLSCHED_PROTOCOL unset) and in ranks other than 0 (SLURM_PROCID, then RANK, where
set) the reporting functions do nothing and return False. Wrong arguments raise ValueError; a
report that cannot be written is a warning on stderr, never an exception: training goes on.
Lines are written exactly as the dlsched-progress command writes them.
"""

import contextlib
import json
import math
import os
import signal
import sys
import time

PROTOCOL_VERSION = 1
_EARLIEST_S = 946684800.0  # 2000-01-01
_AHEAD_S = 86400.0
_MAX_EPOCH = 1e7
_MAX_SECONDS = 1e7
_MAX_BYTES = 2 ** 53

_requested = False

__all__ = ["PROTOCOL_VERSION", "enabled", "epoch_done", "checkpoint_saved", "checkpoint_loaded", "saving",
           "loading", "install_checkpoint_handler", "checkpoint_requested", "checkpoint_signal",
           "restart_count", "gpus", "checkpoint_dir", "model", "epochs_total", "last_reported_epoch",
           "resume_epoch"]


def _warn(msg):
    print("dlsched_progress: " + msg, file=sys.stderr, flush=True)


def _rank0():
    for var in ("SLURM_PROCID", "RANK"):
        value = os.environ.get(var, "")
        try:
            if value and int(value) != 0:
                return False
        except ValueError:
            pass
    return True


def enabled():
    """True when this task reports: under dlsched (protocol 1), rank 0, with a progress file."""
    proto = os.environ.get("DLSCHED_PROTOCOL", "")
    if not proto or not _rank0():
        return False
    if proto != str(PROTOCOL_VERSION):
        _warn("DLSCHED_PROTOCOL=%s, this helper speaks version %d; nothing reported" % (proto, PROTOCOL_VERSION))
        return False
    if not os.environ.get("DLSCHED_PROGRESS_FILE"):
        _warn("DLSCHED_PROTOCOL is set but DLSCHED_PROGRESS_FILE is not; nothing reported")
        return False
    return True


def _number(name, value, lo, hi, whole=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s %r: need a number" % (name, value))
    if not math.isfinite(value) or (whole and value != math.floor(value)) or not lo <= value <= hi:
        raise ValueError("%s %r: need a %s from %g to %g" % (name, value, "whole number" if whole else "number",
                                                            lo, hi))
    return value


def _time(name, value):
    _number(name, value, -math.inf, math.inf)
    if not _EARLIEST_S <= value <= time.time() + _AHEAD_S:
        raise ValueError("%s %r: not a plausible time (Unix seconds, e.g. time.time())" % (name, value))
    return float(value)


def _write(line):
    """One line, one write(2) on an O_APPEND descriptor (never interleaved with other writers)."""
    if not enabled():
        return False
    path = os.environ["DLSCHED_PROGRESS_FILE"]
    data = (line + "\n").encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            if os.write(fd, data) != len(data):
                _warn("short write to %s; report lost: %s" % (path, line))
                return False
        finally:
            os.close(fd)
    except OSError as e:
        _warn("cannot report to %s: %s" % (path, e))
        return False
    return True


def epoch_done(epoch, start=None, end=None):
    """Epoch `epoch` (1, 2, ... over the whole job, across restarts) has just ended.

    start, end: Unix seconds (end defaults to now; start may be left out: the collector uses the
    previous report's end). Returns True when the report was written."""
    _number("epoch", epoch, 1, _MAX_EPOCH, whole=True)
    end = time.time() if end is None else _time("end", end)
    if start is not None:
        start = _time("start", start)
        if start > end:
            raise ValueError("epoch %d: start %.6f is after end %.6f" % (epoch, start, end))
        return _write('{"v":1,"event":"epoch","epoch":%d,"start":%.6f,"end":%.6f}' % (epoch, start, end))
    return _write('{"v":1,"event":"epoch","epoch":%d,"end":%.6f}' % (epoch, end))


def _size(path):
    """A checkpoint's size: a file's, or the files' under a directory."""
    if os.path.isdir(path):
        total = 0
        for root, _dirs, files in os.walk(path):
            for f in files:
                p = os.path.join(root, f)
                if os.path.isfile(p) and not os.path.islink(p):
                    total += os.path.getsize(p)
        return total
    return os.path.getsize(path)


def _checkpoint(kind, epoch, bytes_or_path, seconds):
    _number("epoch", epoch, 0, _MAX_EPOCH)
    if isinstance(bytes_or_path, (str, bytes, os.PathLike)):
        try:
            nbytes = _size(bytes_or_path)
        except OSError as e:
            raise ValueError("checkpoint %r: %s" % (bytes_or_path, e)) from e
    else:
        nbytes = _number("bytes", bytes_or_path, 0, _MAX_BYTES, whole=True)
    _number("seconds", seconds, 0, _MAX_SECONDS)
    return _write('{"v":1,"event":"checkpoint","kind":"%s","epoch":%.15g,"bytes":%d,"seconds":%.6f,"at":%.6f}'
                  % (kind, epoch, nbytes, seconds, time.time()))


def checkpoint_saved(epoch, bytes_or_path, seconds):
    """A checkpoint holding `epoch` epochs of training (fractions allowed) was written in `seconds`.

    bytes_or_path: its size in bytes, or its path (a file, or a directory whose files are summed)."""
    return _checkpoint("save", epoch, bytes_or_path, seconds)


def checkpoint_loaded(epoch, bytes_or_path, seconds):
    """A checkpoint holding `epoch` epochs was read and the model and optimizer restored in `seconds`."""
    return _checkpoint("load", epoch, bytes_or_path, seconds)


@contextlib.contextmanager
def saving(path, epoch):
    """Times the block that writes the checkpoint at `path`, then reports its size and the time.

    Nothing is reported if the block raises. Write to a temporary name and rename inside the block
    so that a checkpoint cut short by SIGKILL never replaces the previous one."""
    t0 = time.time()
    yield
    checkpoint_saved(epoch, path, time.time() - t0)


@contextlib.contextmanager
def loading(path, epoch):
    """Times the block that reads the checkpoint at `path` and restores from it, then reports it."""
    t0 = time.time()
    yield
    checkpoint_loaded(epoch, path, time.time() - t0)


def checkpoint_signal():
    """The checkpoint request's signal: DLSCHED_CHECKPOINT_SIGNAL (without SIG), SIGUSR1 if unset."""
    name = os.environ.get("DLSCHED_CHECKPOINT_SIGNAL", "USR1").upper()
    if not name.startswith("SIG"):
        name = "SIG" + name
    sig = getattr(signal, name, None)
    if not isinstance(sig, signal.Signals) or sig in (signal.SIGKILL, signal.SIGSTOP):
        _warn("DLSCHED_CHECKPOINT_SIGNAL=%s names no signal to catch; using SIGUSR1"
              % os.environ.get("DLSCHED_CHECKPOINT_SIGNAL"))
        return signal.SIGUSR1
    return sig


def _on_signal(signum, _frame):
    global _requested
    _requested = True


def install_checkpoint_handler(sigterm=True):
    """From now on the checkpoint signal (and SIGTERM: Slurm's preemption and requeue) only set the
    flag that checkpoint_requested() returns; the job saves at its next safe point and exits.
    Call it from the main thread (Python's rule for signal handlers)."""
    signal.signal(checkpoint_signal(), _on_signal)
    if sigterm:
        signal.signal(signal.SIGTERM, _on_signal)


def checkpoint_requested():
    """True once the checkpoint signal or SIGTERM arrived (after install_checkpoint_handler())."""
    return _requested


def _env_int(var):
    try:
        return int(os.environ[var])
    except (KeyError, ValueError):
        return None


def restart_count():
    """How many times the job was requeued before this run (0 for the first run)."""
    return _env_int("DLSCHED_RESTART") or 0


def gpus():
    """GPUs this run holds over all its nodes, or None outside dlsched."""
    return _env_int("DLSCHED_GPUS")


def checkpoint_dir():
    """Where to keep checkpoints (--dl-checkpoint-dir), or None if the job did not give one."""
    return os.environ.get("DLSCHED_CHECKPOINT_DIR") or None


def model():
    """--dl-model, or None."""
    return os.environ.get("DLSCHED_MODEL") or None


def epochs_total():
    """--dl-epochs as a number, or None."""
    try:
        return float(os.environ["DLSCHED_EPOCHS"])
    except (KeyError, ValueError):
        return None


def _reports():
    """The reports in this step's progress file so far (empty when there is none)."""
    path = os.environ.get("DLSCHED_PROGRESS_FILE")
    if not path:
        return []
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec.get("v") == PROTOCOL_VERSION:
                    out.append(rec)
    except OSError:
        pass
    return out


def last_reported_epoch():
    """The last epoch reported in this step's progress file, 0 if none.

    The file is node-local: it holds an earlier run's reports only when the requeued job runs its
    batch step on the same node again. The job's own checkpoint is the reliable record."""
    epochs = [r.get("epoch") for r in _reports() if r.get("event") == "epoch"]
    return int(epochs[-1]) if epochs and isinstance(epochs[-1], (int, float)) else 0


def resume_epoch():
    """Whole epochs held by the last checkpoint saved according to the progress file, 0 if none.

    Same caveat as last_reported_epoch(): resuming is the job's responsibility; keep the epoch in
    the checkpoint itself and use this only as a fallback."""
    saves = [r.get("epoch") for r in _reports() if r.get("event") == "checkpoint" and r.get("kind") == "save"]
    if saves and isinstance(saves[-1], (int, float)):
        return int(math.floor(saves[-1] + 1e-9))
    return 0
