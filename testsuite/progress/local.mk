# The training-job helpers (dlsched-progress, dlsched_progress.py) and the collector, without Slurm.
TESTS += testsuite/progress/test-progress.sh testsuite/progress/test-collect.sh
EXTRA_DIST += testsuite/progress/test-progress.sh testsuite/progress/test-collect.sh testsuite/progress/receiver.py
