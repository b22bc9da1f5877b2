dist_man_MANS += doc/man/dlsched-sim.1 doc/man/dlsched.conf.5 doc/man/dlsched-cluster.1 doc/man/dlsched-report.1 doc/man/dlsched-db.1
# dlsched(7): overview and installation on an existing cluster (doc/admin-guide.md at length).
dist_man_MANS += doc/man/dlsched.7
# The configuration examples the admin guide starts from and the user guide's job script,
# installed beside README and NEWS.
exampledir = $(docdir)/examples
dist_example_DATA = etc/dlsched.conf.example etc/slurm.conf.example etc/gres.conf.example etc/plugstack.conf.example \
	doc/examples/train.sbatch doc/examples/train.py
EXTRA_DIST += doc/workload-format.md doc/architecture.md doc/results.md doc/user-guide.md doc/admin-guide.md
# Slurm's own tests against dlsched (scripts/slurm-testsuite): what runs, the results, what cannot.
EXTRA_DIST += doc/slurm-testsuite.md
# dlsched-ingestd(8): installed with or without the service (libmicrohttpd, munge).
dist_man_MANS += doc/man/dlsched-ingestd.8
# The training-job protocol: dlsched-progress(1) and dlsched-protocol(7).
dist_man_MANS += doc/man/dlsched-progress.1 doc/man/dlsched-protocol.7 doc/man/dlsched-jobs.7
# dlsched-train(1): installed with the learned policies (libtorch).
dist_man_MANS += doc/man/dlsched-train.1
# dlsched-guard(1): the learned policy's guard for Slurm (libtorch).
dist_man_MANS += doc/man/dlsched-guard.1
# dlsched-calibrate(1): the overhead model measured on a GPU node.
dist_man_MANS += doc/man/dlsched-calibrate.1
EXTRA_DIST += doc/calibration/h200-run1.json doc/calibration/h200-run1.csv doc/calibration/h200-run2.json \
	doc/calibration/h200-shm.json doc/calibration/h200-env.txt
# Every tool's --help and its man page's OPTIONS list the same options.
TESTS += testsuite/doc/test-man-options.sh
EXTRA_DIST += testsuite/doc/test-man-options.sh
# Every script answers --help with its usage and does nothing else.
TESTS += testsuite/doc/test-script-help.sh
EXTRA_DIST += testsuite/doc/test-script-help.sh
