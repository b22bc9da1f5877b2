common_libdlsched_la_SOURCES += \
	common/util/random.h \
	common/workload/workload.h \
	common/workload/trace.h \
	common/workload/columns.h \
	common/workload/columns.cpp \
	common/workload/philly.cpp \
	common/workload/pollux.cpp \
	common/workload/native.cpp \
	common/workload/builder.cpp \
	common/workload/load.cpp \
	common/workload/profiles.cpp \
	common/workload/inference_demand.h \
	common/workload/inference_demand.cpp
common_libdlsched_la_CPPFLAGS += -DDLSCHED_PKGDATADIR='"$(pkgdatadir)"' -DDLSCHED_SRCDIR='"$(abs_top_srcdir)"'
