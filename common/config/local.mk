common_libdlsched_la_SOURCES += \
	common/config/config.h \
	common/config/config.cpp \
	common/config/keys.cpp
common_libdlsched_la_SOURCES += \
	common/config/quota_file.h \
	common/config/quota_file.cpp
