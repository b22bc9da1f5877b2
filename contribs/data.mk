# Bundled data (profiles, traces), installed under $(pkgdatadir) with the same layout as in contribs/,
# so that default_data_dir() finds profiles/ in either place.
EXTRA_DIST += contribs/profiles contribs/traces

install-data-local: install-bundled-data
install-bundled-data:
	$(MKDIR_P) $(DESTDIR)$(pkgdatadir)
	cp -R $(srcdir)/contribs/profiles $(srcdir)/contribs/traces $(DESTDIR)$(pkgdatadir)/
	chmod -R u+w $(DESTDIR)$(pkgdatadir)/profiles $(DESTDIR)$(pkgdatadir)/traces

uninstall-local: uninstall-bundled-data
uninstall-bundled-data:
	rm -rf $(DESTDIR)$(pkgdatadir)/profiles $(DESTDIR)$(pkgdatadir)/traces
.PHONY: install-bundled-data uninstall-bundled-data
