// Partition lists: a job submitted to several partitions (sbatch -p a,b) and a node in several
// partitions carry them as one comma-separated string ("a,b"), in Slurm's order.
#ifndef DLSCHED_MODEL_PARTITION_LIST_H
#define DLSCHED_MODEL_PARTITION_LIST_H

#include <string>
#include <string_view>

namespace dlsched {

// The first partition of a list ("a" of "a,b"; the list itself when it has one).
inline std::string_view first_partition(std::string_view list)
{
	return list.substr(0, list.find(','));
}

// Whether the lists name a partition in common. Empty names (",,") match nothing.
inline bool partitions_overlap(std::string_view a, std::string_view b)
{
	while (!a.empty()) {
		const std::size_t comma = a.find(',');
		const std::string_view name = a.substr(0, comma);
		if (!name.empty()) {
			std::string_view rest = b;
			while (!rest.empty()) {
				const std::size_t c = rest.find(',');
				if (rest.substr(0, c) == name)
					return true;
				rest = c == std::string_view::npos ? std::string_view() : rest.substr(c + 1);
			}
		}
		a = comma == std::string_view::npos ? std::string_view() : a.substr(comma + 1);
	}
	return false;
}

}  // namespace dlsched

#endif
