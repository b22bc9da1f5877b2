common_libdlsched_la_SOURCES +=
