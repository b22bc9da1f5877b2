dist_bin_SCRIPTS += contribs/cluster/dlsched-cluster
# The installed dlsched-cluster finds the installed plugins and daemons (`up` without --plugin-dir
# or --build-dir): write where they went into its installed_* lines.
install-exec-hook: install-dlsched-cluster-paths
install-dlsched-cluster-paths:
	sed -i -e 's|^installed_plugindir=""$$|installed_plugindir="$(slurm_plugindir)"|' \
		-e 's|^installed_sbindir=""$$|installed_sbindir="$(sbindir)"|' \
		-e 's|^installed_pkglibexecdir=""$$|installed_pkglibexecdir="$(pkglibexecdir)"|' \
		-e 's|^installed_pkgdatadir=""$$|installed_pkgdatadir="$(pkgdatadir)"|' \
		"$(DESTDIR)$(bindir)/dlsched-cluster"
.PHONY: install-dlsched-cluster-paths
