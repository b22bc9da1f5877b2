# make check: unit tests (Check), simulator golden tests, the layering check.
TESTS += testsuite/check-layering.sh
EXTRA_DIST += testsuite/check-layering.sh
# The admin-comment words: one definition (dlsched/words.h) that the plugins and dlsched-report follow.
TESTS += testsuite/check-words.sh
EXTRA_DIST += testsuite/check-words.sh
# configure refuses an unsupported Slurm release; the release is tested only in the compat layer.
TESTS += testsuite/check-slurm-compat.sh
EXTRA_DIST += testsuite/check-slurm-compat.sh
# scripts/get-slurm-source --tarball: the release is read from META (tag-named and SchedMD tarballs).
TESTS += testsuite/test-get-slurm-source.sh
EXTRA_DIST += testsuite/test-get-slurm-source.sh

if HAVE_CHECK
include testsuite/unit/local.mk
else
# Without Check the unit tests cannot be built: a failing test says so, rather than a check that
# passes with them missing.
TESTS += testsuite/unit/no-check.sh
endif
EXTRA_DIST += testsuite/unit/no-check.sh
include testsuite/sim/local.mk
include testsuite/progress/local.mk

# A real local Slurm cluster (skips where Slurm, munge or MariaDB are not installed, or not root).
TESTS += testsuite/cluster/test-cluster-basic.sh testsuite/cluster/test-plugins.sh testsuite/cluster/test-profiling.sh
EXTRA_DIST += testsuite/cluster/test-cluster-basic.sh testsuite/cluster/test-plugins.sh testsuite/cluster/test-profiling.sh
# The same on another Slurm release's daemons (dlsched-cluster up --slurm-prefix; skips without one
# built by scripts/build-slurm).
TESTS += testsuite/cluster/test-slurm-prefix.sh
EXTRA_DIST += testsuite/cluster/test-slurm-prefix.sh
# What sched/dlsched must not do: start jobs Slurm would not, preempt jobs that cannot be requeued, trust
# users' runtime claims beyond their time limits, override administrators.
TESTS += testsuite/cluster/test-safety.sh testsuite/cluster/test-preemption.sh
EXTRA_DIST += testsuite/cluster/test-safety.sh testsuite/cluster/test-preemption.sh
# Nothing lost while dlsched.conf is broken: preemptions in progress finish (across a restart too)
# and the loan fence holds.
TESTS += testsuite/cluster/test-stops.sh
EXTRA_DIST += testsuite/cluster/test-stops.sh
# scontrol reconfigure (a restart of slurmctld from Slurm 23.11) while a job is checkpointing, one is
# held for its deadline, a node is lent and another reclaimed: all four go on (about 1.5 minutes).
TESTS += testsuite/cluster/test-reconfigure.sh
EXTRA_DIST += testsuite/cluster/test-reconfigure.sh
# job_submit/dlsched: elastic ranges checked at submission; the deadline word fixed after it.
TESTS += testsuite/cluster/test-job-submit.sh
EXTRA_DIST += testsuite/cluster/test-job-submit.sh
# The learned policies in slurmctld (skips when sched/dlsched was built without libtorch).
TESTS += testsuite/cluster/test-learned.sh
# The learned policy's guard in slurmctld: the verdict file followed, refused when others may
# write it or when stale, every switch logged and counted (about a minute; skips without libtorch).
TESTS += testsuite/cluster/test-guard.sh
EXTRA_DIST += testsuite/cluster/test-guard.sh
# Deadlines: autoscaling to meet one, DeadlineInfeasible=, completion rates from sacct.
TESTS += testsuite/cluster/test-deadline.sh
EXTRA_DIST += testsuite/cluster/test-deadline.sh
# Capacity loaning: an inference node lent, taken back within ReclaimTimeout=, state across restarts.
TESTS += testsuite/cluster/test-loaning.sh
EXTRA_DIST += testsuite/cluster/test-loaning.sh
# The loan and demand files under slurmctld's locks: foreign owners, failed writes, junk, a FIFO.
TESTS += testsuite/cluster/test-loan-files.sh
EXTRA_DIST += testsuite/cluster/test-loan-files.sh
# The advisor mode across reconfigures (PreemptType changed) and stale decisions (victims that can
# no longer be requeued).
TESTS += testsuite/cluster/test-advisor.sh
EXTRA_DIST += testsuite/cluster/test-advisor.sh
# Elastic jobs: grow into idle GPUs and shrink for a rigid job, by checkpoint and requeue.
TESTS += testsuite/cluster/test-elastic.sh
EXTRA_DIST += testsuite/cluster/test-elastic.sh
# Teams: an account below its quota gets borrowed GPUs back by checkpoint and requeue (FairnessPolicy=quota).
TESTS += testsuite/cluster/test-fairness.sh
EXTRA_DIST += testsuite/cluster/test-fairness.sh
# Fair-share in full mode: priority/multifactor with INCR_ONLY records usage (sshare) and keeps
# dlsched's order; FairnessPolicy=fairshare puts the account that used less first.
TESTS += testsuite/cluster/test-fairshare.sh
EXTRA_DIST += testsuite/cluster/test-fairshare.sh
# The placement agent (gp-placement) learns machine speeds from measured epochs on a heterogeneous
# cluster (V100s, one throttled, and K80s) and places new jobs on the fastest.
TESTS += testsuite/cluster/test-dual-agent.sh
EXTRA_DIST += testsuite/cluster/test-dual-agent.sh
# scripts/slurm-testsuite (Slurm's own expect and python tests) end to end on three tests in stock
# mode; the comparison of both modes on the full list is the script itself (doc/slurm-testsuite.md).
TESTS += testsuite/cluster/test-slurm-testsuite.sh
EXTRA_DIST += testsuite/cluster/test-slurm-testsuite.sh
# The user guide's job script (doc/examples: PyTorch) checkpointed on dlsched's request, requeued
# and resumed (skips without python3-torch).
TESTS += testsuite/cluster/test-job-example.sh
EXTRA_DIST += testsuite/cluster/test-job-example.sh
EXTRA_DIST += testsuite/cluster/test-learned.sh testsuite/cluster/lib.sh
# Model files for it (random or hand-set) and the order a model gives offline, through the C ABI.
if HAVE_TORCH
check_PROGRAMS += testsuite/cluster/make-model
testsuite_cluster_make_model_SOURCES = testsuite/cluster/make-model.cpp
testsuite_cluster_make_model_CPPFLAGS = $(AM_CPPFLAGS) $(TORCH_CPPFLAGS) -I$(top_srcdir)
# libtorch's headers are not clean under our warning flags.
testsuite_cluster_make_model_CXXFLAGS = $(AM_CXXFLAGS) -Wno-unused-parameter -Wno-sign-compare -Wno-shadow
testsuite_cluster_make_model_LDADD = models/libdlsched_models.la common/libdlsched.la $(JANSSON_LIBS) \
	$(SQLITE_LIBS) $(TORCH_LIBS)
endif
# A libslurm.so client (test-profiling.sh): the dlsched select plugin must load outside slurmctld.
if HAVE_SLURM
check_PROGRAMS += testsuite/cluster/load-job
testsuite_cluster_load_job_SOURCES = testsuite/cluster/load-job.c
testsuite_cluster_load_job_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_CPPFLAGS)
testsuite_cluster_load_job_LDADD = $(SLURM_LDFLAGS) -lslurm
endif
# The soak test of the ingest service's threat model (hostile clients, a slurmctld restart; about
# 2 minutes; scripts/soak runs it alone).
TESTS += testsuite/cluster/test-soak.sh
EXTRA_DIST += testsuite/cluster/test-soak.sh

# dlsched-report against hand-computed figures from a fixed sacct output.
TESTS += testsuite/report/test-report.sh
EXTRA_DIST += testsuite/report/test-report.sh testsuite/report/data/sacct.txt testsuite/report/data/sacct-header.txt testsuite/report/data/bad.txt testsuite/report/data/reused.txt \
	testsuite/report/data/dlsched-sched.stats
# dlsched-calibrate on the CPU (ncf, 3 iterations; about 10 s; skips without python3-torch).
TESTS += testsuite/calibrate/test-calibrate.sh
EXTRA_DIST += testsuite/calibrate/test-calibrate.sh
include testsuite/train/local.mk
include testsuite/guard/local.mk

# One set of metric definitions: dlsched-sim's metrics and dlsched-report on the same outcomes.
check_PROGRAMS += testsuite/metrics/metrics-json
testsuite_metrics_metrics_json_SOURCES = testsuite/metrics/metrics-json.cpp
testsuite_metrics_metrics_json_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
testsuite_metrics_metrics_json_LDADD = contribs/sim/libsim.la common/libdlsched.la $(JANSSON_LIBS) $(SQLITE_LIBS)
TESTS += testsuite/metrics/test-metrics-agree.sh
EXTRA_DIST += testsuite/metrics/test-metrics-agree.sh testsuite/metrics/outcomes.csv testsuite/metrics/to-sacct.py

# Recorded cycles as tests: cycles sched/dlsched recorded (DumpViews=) on a real cluster replay to the
# same decisions (dlsched-sim decide --view; testsuite/cluster/test-preemption.sh records them).
TESTS += testsuite/replay/test-replay.sh
EXTRA_DIST += testsuite/replay/test-replay.sh testsuite/replay/view-1795765831-000012.json \
	testsuite/replay/view-1795765832-000013.json testsuite/replay/README.md
# dlsched-replay waits for a job sched/dlsched is stopping (its stopping table) before it counts the
# job done: stand-in Slurm commands play one job's states. About 75 s, nearly all of it sleeping.
TESTS += testsuite/replay/test-replay-stops.sh
EXTRA_DIST += testsuite/replay/test-replay-stops.sh
