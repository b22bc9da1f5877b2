common_libdlsched_la_SOURCES += \
	common/capi/api.cpp \
	common/capi/dump.h \
	common/capi/dump.cpp
dlschedincludedir = $(includedir)/dlsched
dlschedinclude_HEADERS = common/include/dlsched/api.h common/include/dlsched/limits.h \
	common/include/dlsched/words.h
