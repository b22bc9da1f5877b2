#!/usr/bin/python3
"""The demo's final comparison: stock Slurm against dlsched, from dlsched-report's JSON (argv[1], the
output of dlsched-report --compare stock=... dlsched=... --format json) for a replay run argv[2]
times faster than the trace. Prints each figure in both units (the cluster's compressed seconds and
the trace's time, which dlsched-sim speaks), the difference, the JCT CDF the chart draws as text,
and one line of conclusion."""
import json
import sys

res = json.load(open(sys.argv[1]))
speedup = float(sys.argv[2])
a, b = res["stock"], res["dlsched"]


def human(s):
    if s is None:
        return "-"
    if abs(s) < 120:
        return f"{s:.1f}s"
    if abs(s) < 7200:
        return f"{s / 60:.1f}m"
    return f"{s / 3600:.2f}h"


def both(s):
    return "-" if s is None else f"{human(s)} ({human(s * speedup)})"


def diff(x, y):
    if x is None or y is None:
        return "-"
    if x == 0:
        return "0" if y == 0 else f"{y - x:+g}"
    return f"{(y - x) / x * 100:+.1f}%"


def rate(m):
    return f"{m['deadline_met']}/{m['deadline_jobs']}" if m["deadline_jobs"] else "-"


rows = [("average JCT", both(a["avg_jct_s"]), both(b["avg_jct_s"]), diff(a["avg_jct_s"], b["avg_jct_s"])),
        ("p95 JCT", both(a["p95_jct_s"]), both(b["p95_jct_s"]), diff(a["p95_jct_s"], b["p95_jct_s"])),
        ("average queueing", both(a["avg_queue_s"]), both(b["avg_queue_s"]), diff(a["avg_queue_s"], b["avg_queue_s"])),
        ("makespan", both(a["makespan_s"]), both(b["makespan_s"]), diff(a["makespan_s"], b["makespan_s"])),
        ("deadlines met", rate(a), rate(b),
         f"{b['deadline_met'] - a['deadline_met']:+d} jobs" if a["deadline_jobs"] else "-"),
        ("restarts (requeues+resizes)", str(a["restarts"]), str(b["restarts"]), f"{b['restarts'] - a['restarts']:+d}")]
w = [max(len(r[i]) for r in rows + [("", "stock Slurm", "dlsched", "difference")]) + 2 for i in range(4)]
print(f"{'':<{w[0]}}{'stock Slurm':>{w[1]}}{'dlsched':>{w[2]}}{'difference':>{w[3]}}")
for r in rows:
    print(f"{r[0]:<{w[0]}}{r[1]:>{w[1]}}{r[2]:>{w[2]}}{r[3]:>{w[3]}}")
print(f"times: the cluster's seconds (and in brackets trace time: x{speedup:g}, the units dlsched-sim uses)")
print("restarts: dlsched checkpoints a job and requeues it (to preempt it for a shorter one, or to resize it);")
print("  those are 'requeues' and 'resizes' in the report above. Its 'preemptions' counts Slurm's own preemption"
      f" (PREEMPTED records), which dlsched does not use: stock {a['preemptions']}, dlsched {b['preemptions']}")
# The chart's left panel (JCT CDF) as text: the JCT at each tenth of the jobs.
da, db = a.get("jct_deciles_s"), b.get("jct_deciles_s")
if da and db:
    top = max(da[-1], db[-1]) or 1
    print("JCT CDF (compare.svg, left panel): the JCT under which each tenth of the jobs finished")
    for i, (x, y) in enumerate(zip(da, db)):
        bar = lambda v, c: (c * max(1, round(30 * v / top))).ljust(31)
        print(f"  {10 * (i + 1):>3}%  stock {bar(x, '#')}{human(x):>7}   dlsched {bar(y, '=')}{human(y):>7}")
x, y = a["avg_jct_s"], b["avg_jct_s"]
if x and y:
    word = "faster" if y < x else "slower"
    print(f"conclusion: on this replay dlsched finished jobs {abs(y - x) / x * 100:.0f}% {word} on average than stock "
          f"Slurm ({human(y)} against {human(x)}), met {rate(b)} deadlines against {rate(a)}, and queued jobs "
          f"{human(b['avg_queue_s'])} against {human(a['avg_queue_s'])}.")
