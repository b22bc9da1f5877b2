#include "owner_lookup.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/csv.h"

namespace dlsched::ingest {

namespace {
std::size_t passwd_buffer_size()
{
	const long n = sysconf(_SC_GETPW_R_SIZE_MAX);
	return n > 0 ? static_cast<std::size_t>(n) : 16384;
}
}  // namespace

std::string user_name(uid_t uid)
{
	std::vector<char> buf(passwd_buffer_size());
	struct passwd pw;
	struct passwd* found = nullptr;
	if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found)
		return found->pw_name;
	return std::to_string(uid);
}

Result<uid_t> user_uid(const std::string& name)
{
	long long n = 0;
	if (parse_integer(name, n) && n >= 0 && n <= 0xfffffffeLL)
		return static_cast<uid_t>(n);
	std::vector<char> buf(passwd_buffer_size());
	struct passwd pw;
	struct passwd* found = nullptr;
	const int rc = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
	if (rc != 0)
		return io_error("cannot resolve the job owner's name '" + name + "': " + std::strerror(rc) +
				" (NSS)");
	if (!found)
		return io_error(
			"the job owner's name '" + name +
			"' is unknown to NSS here (passwd, LDAP?): cannot compare it with the sender's uid");
	return found->pw_uid;
}

Result<uid_t> parse_user(const std::string& name_or_uid, const std::string& option)
{
	long long n = 0;
	if (parse_integer(name_or_uid, n)) {
		if (n < 0 || n > 0xfffffffeLL)
			return invalid_argument(option + " " + name_or_uid + ": not a uid");
		return static_cast<uid_t>(n);
	}
	std::vector<char> buf(passwd_buffer_size());
	struct passwd pw;
	struct passwd* found = nullptr;
	const int rc = getpwnam_r(name_or_uid.c_str(), &pw, buf.data(), buf.size(), &found);
	if (rc != 0 || !found)
		return invalid_argument(option + " " + name_or_uid + ": no such user" +
					(rc ? std::string(" (") + std::strerror(rc) + ")" : std::string()) +
					"; give Slurm's SlurmUser by name or uid");
	return found->pw_uid;
}

}  // namespace dlsched::ingest
