common_libdlsched_la_SOURCES += \
	common/policy/free_map.h \
	common/policy/free_map.cpp \
	common/policy/ordering.h \
	common/policy/placement.h \
	common/policy/allocation.h \
	common/policy/allocation.cpp \
	common/policy/admission.h \
	common/policy/preemption.h \
	common/policy/loaning.h \
	common/policy/registry.h \
	common/policy/registry.cpp \
	common/policy/scheduler.h \
	common/policy/scheduler.cpp \
	common/policy/builtin.cpp
