# The training-job helpers (dlsched-progress, dlsched_progress.py), without Slurm.
TESTS += testsuite/progress/test-progress.sh
EXTRA_DIST += testsuite/progress/test-progress.sh
