#!/usr/bin/python3
"""Writes outcomes.csv (argv[1]) as the sacct output dlsched-report reads (--save's 17 fields), one
record per run: a job requeued r times and resized z times has r + z records before its last, the
resizes counted in its AdminComment (dl_resizes=, as sched/dlsched writes it). Times are local
times from 2026-01-01T00:00:00; the caller pins TZ. The admin-comment words are read from their one
definition, common/include/dlsched/words.h, as dlsched-report reads them."""
import datetime
import os
import re
import sys

BASE = datetime.datetime(2026, 1, 1)
WORDS_H = os.path.join(os.path.dirname(os.path.realpath(__file__)), "../../common/include/dlsched/words.h")
with open(WORDS_H, encoding="utf-8") as f:
    WORD = dict(re.findall(r'^#define DLSCHED_WORD_([A-Z_]+)\s+"([a-z_]+)"', f.read(), re.M))


def t(s):
    return (BASE + datetime.timedelta(seconds=float(s))).isoformat(timespec="seconds")


def epoch(s):
    return int((BASE + datetime.timedelta(seconds=float(s))).timestamp())


for line in open(sys.argv[1], encoding="utf-8"):
    if not line.strip() or line.startswith("#"):
        continue
    jid, user, qos, submit, start, end, gpus, requeues, resizes, deadline, state = line.strip().split(",")
    words = []
    if deadline:
        words.append(f"{WORD['DEADLINE']}={epoch(deadline)}")
    if int(resizes):
        words.append(f"{WORD['RESIZES']}={resizes}")
    comment = " ".join(words)
    runs = int(requeues) + int(resizes)
    tres = f"billing={gpus},cpu={gpus},gres/gpu={gpus},node=1"
    if state == "CANCELLED":  # never ran: no start, no allocation
        print("|".join([jid, jid, f"job{jid}", user, "gpu", qos, "CANCELLED by 0", t(submit), t(submit),
                        "Unknown", t(end), "00:00:00", "", "1", "local", "None assigned", comment]))
        continue
    s0, e = float(start), float(end)
    # Earlier runs: short runs between the first start and the end, each requeued.
    step = (e - s0) / (runs + 1)
    for k in range(runs):
        a, b = s0 + k * step, s0 + k * step + step / 2
        el = int(b - a)
        print("|".join([jid, jid, f"job{jid}", user, "gpu", qos, "REQUEUED", t(submit), t(submit), t(a), t(b),
                        f"00:{el // 60:02d}:{el % 60:02d}", tres, "1", "local", "n1", comment]))
    a = s0 + runs * step
    el = int(e - a)
    print("|".join([jid, jid, f"job{jid}", user, "gpu", qos, state, t(submit), t(submit), t(a), t(e),
                    f"{el // 3600:02d}:{el % 3600 // 60:02d}:{el % 60:02d}", tres, "1", "local", "n1", comment]))
