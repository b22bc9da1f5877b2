# dlsched-guard on a recorded sacct history: the verdict, its rule, its files (skips without libtorch).
TESTS += testsuite/guard/test-dlsched-guard.sh
EXTRA_DIST += testsuite/guard/test-dlsched-guard.sh testsuite/data/guard_sacct.txt testsuite/data/guard_sacct_db.txt
