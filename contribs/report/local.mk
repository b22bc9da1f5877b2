# dlsched-report: what the cluster did, from sacct's parsable output (Python 3, standard library only).
dist_bin_SCRIPTS += contribs/report/dlsched-report
EXTRA_DIST += contribs/report/README.md
# dlsched-agreement (cluster vs simulator) is installed from here as well.
dist_bin_SCRIPTS += contribs/agreement/dlsched-agreement
