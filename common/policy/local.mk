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
	common/policy/estimates.h \
	common/policy/builtin_policies.h \
	common/policy/builtin.cpp \
	common/policy/fifo.cpp \
	common/policy/rigid.cpp \
	common/policy/easy_backfill.cpp \
	common/policy/srtf.cpp \
	common/policy/tiresias.cpp \
	common/policy/drf.cpp \
	common/policy/optimus.cpp \
	common/policy/edf.cpp \
	common/policy/placement_pack.cpp
