common_libdlsched_la_SOURCES += \
	common/json/json.h \
	common/json/json.cpp
