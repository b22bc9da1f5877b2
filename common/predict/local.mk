common_libdlsched_la_SOURCES += \
	common/predict/predict.h \
	common/predict/predict.cpp
