# dlsched-train end to end on a toy workload (skips without libtorch).
TESTS += testsuite/train/test-train.sh
EXTRA_DIST += testsuite/train/test-train.sh
# dlsched-train site on a toy history: the report card and the refusal (skips without libtorch).
TESTS += testsuite/train/test-train-site.sh
EXTRA_DIST += testsuite/train/test-train-site.sh
