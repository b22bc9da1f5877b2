common_libdlsched_la_SOURCES += \
	common/profiledb/sqlite.h \
	common/profiledb/sqlite.cpp \
	common/profiledb/profile_db.h \
	common/profiledb/profile_db.cpp \
	common/profiledb/records.h \
	common/profiledb/records.cpp \
	common/profiledb/claims.h \
	common/profiledb/claims.cpp \
	common/profiledb/experience.h \
	common/profiledb/experience.cpp
