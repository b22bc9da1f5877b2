# Helpers that are not about scheduling (the rest of common/util is listed in common/model/local.mk).
common_libdlsched_la_SOURCES += \
	common/util/command.h \
	common/util/command.cpp \
	common/util/flag_table.h \
	common/util/flag_table.cpp \
	common/util/node_list.h \
	common/util/node_list.cpp \
	common/util/slurm_conf.h \
	common/util/slurm_conf.cpp \
	common/util/stopping_journal.h \
	common/util/stopping_journal.cpp \
	common/util/trusted_file.h \
	common/util/trusted_file.cpp
