common_libdlsched_la_SOURCES += \
	common/config/config.h \
	common/config/config.cpp \
	common/config/keys.cpp
