# dlsched-report (sacct-based report) and dlsched-agreement (cluster vs simulator), Python 3 stdlib.
dist_bin_SCRIPTS += contribs/report/dlsched-report contribs/agreement/dlsched-agreement
