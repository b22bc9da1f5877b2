common_libdlsched_la_SOURCES += \
	common/model/types.h \
	common/model/job.h \
	common/model/node.h \
	common/model/partition_list.h \
	common/model/account.h \
	common/model/cluster_view.h \
	common/model/policy_step.h \
	common/model/cluster_view.cpp \
	common/model/decisions.h \
	common/model/model_catalog.h \
	common/model/model_catalog.cpp \
	common/model/job_metadata.h \
	common/model/job_metadata.cpp \
	common/model/speed_samples.h \
	common/model/speed_samples.cpp \
	common/util/status.h \
	common/util/span.h \
	common/util/csv.h \
	common/util/csv.cpp \
	common/util/flags.h
