#include "util/slurm_conf.h"

#include <strings.h>

#include <cstdio>
#include <cstdlib>

namespace dlsched {

std::string slurm_conf_value(const std::string& key)
{
	const char* env = std::getenv("SLURM_CONF");
	std::FILE* f = std::fopen(env && *env ? env : "/etc/slurm/slurm.conf", "re");
	if (!f)
		return "";
	const std::string want = key + "=";
	char line[4096];
	std::string value;
	while (std::fgets(line, sizeof line, f)) {
		std::string l = line;
		l = l.substr(0, l.find('#'));
		const std::size_t b = l.find_first_not_of(" \t");
		if (b == std::string::npos || strncasecmp(l.c_str() + b, want.c_str(), want.size()) != 0)
			continue;
		value = l.substr(b + want.size());
		value = value.substr(0, value.find_first_of(" \t\r\n"));
	}
	std::fclose(f);
	return value;
}

}  // namespace dlsched
