common_libdlsched_la_SOURCES += \
	common/predict/predict.h \
	common/predict/predict.cpp
common_libdlsched_la_SOURCES += \
	common/predict/history.h \
	common/predict/history.cpp
common_libdlsched_la_SOURCES += \
	common/predict/hints.h \
	common/predict/hints.cpp
common_libdlsched_la_SOURCES += \
	common/predict/overhead.h \
	common/predict/overhead.cpp
common_libdlsched_la_SOURCES += \
	common/predict/profile_reader.h \
	common/predict/profile_reader.cpp
common_libdlsched_la_SOURCES += \
	common/predict/evidence.h \
	common/predict/evidence.cpp
