dist_bin_SCRIPTS += contribs/cluster/dlsched-cluster
