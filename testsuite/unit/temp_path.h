// A fresh path for a test's SQLite file, in one temporary directory per test program.
#ifndef DLSCHED_TEST_TEMP_PATH_H
#define DLSCHED_TEST_TEMP_PATH_H

#include <check.h>
#include <stdlib.h>

#include <cstdio>
#include <string>

namespace dlsched::test {

// PREFIX names the directory (/tmp/PREFIX.XXXXXX, made at the first call); NAME and its -wal and
// -shm files are removed, so that every call starts from no database.
inline std::string temp_path(const char* prefix, const char* name)
{
	static std::string dir;
	if (dir.empty()) {
		std::string tmpl = std::string("/tmp/") + prefix + ".XXXXXX";
		ck_assert_ptr_nonnull(mkdtemp(tmpl.data()));
		dir = tmpl;
	}
	const std::string p = dir + "/" + name;
	std::remove(p.c_str());
	std::remove((p + "-wal").c_str());
	std::remove((p + "-shm").c_str());
	return p;
}

}  // namespace dlsched::test

#endif
