# dlsched-train end to end on a toy workload (skips without libtorch).
TESTS += testsuite/train/test-train.sh
EXTRA_DIST += testsuite/train/test-train.sh
