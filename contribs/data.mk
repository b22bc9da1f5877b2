# Bundled data (profiles, traces), installed under $(pkgdatadir) with the same layout as in contribs/,
# so that default_data_dir() finds profiles/ in either place.
EXTRA_DIST += contribs/profiles contribs/traces
# Peer figures for scripts/check-tiresias-agreement (not installed).
EXTRA_DIST += contribs/peer
# Example cluster files for dlsched-sim --cluster (dlsched-sim(1), CLUSTER FILES), in clusters/.
EXTRA_DIST += contribs/sim/clusters

install-data-local: install-bundled-data
install-bundled-data:
	$(MKDIR_P) $(DESTDIR)$(pkgdatadir)
	cp -R $(srcdir)/contribs/profiles $(srcdir)/contribs/traces $(DESTDIR)$(pkgdatadir)/
	chmod -R u+w $(DESTDIR)$(pkgdatadir)/profiles $(DESTDIR)$(pkgdatadir)/traces
	$(MKDIR_P) $(DESTDIR)$(pkgdatadir)/clusters
	$(INSTALL_DATA) $(srcdir)/contribs/sim/clusters/*.txt $(DESTDIR)$(pkgdatadir)/clusters/
	$(MKDIR_P) $(DESTDIR)$(pkgdatadir)/models
	$(INSTALL_DATA) $(srcdir)/models/dl2.pt $(DESTDIR)$(pkgdatadir)/models/dl2.pt

uninstall-local: uninstall-bundled-data
uninstall-bundled-data:
	rm -rf $(DESTDIR)$(pkgdatadir)/profiles $(DESTDIR)$(pkgdatadir)/traces $(DESTDIR)$(pkgdatadir)/clusters $(DESTDIR)$(pkgdatadir)/models
.PHONY: install-bundled-data uninstall-bundled-data
