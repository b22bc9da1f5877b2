# dlsched-calibrate: measures the overhead model's bandwidths and warm-up on a GPU node (Python 3 and
# PyTorch there; nothing at build time).
dist_bin_SCRIPTS += contribs/calibrate/dlsched-calibrate
