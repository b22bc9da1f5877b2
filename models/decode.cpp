#include "decode.h"

namespace dlsched::models {

DecodedRound decode_round(const std::vector<int>& need, int free_gpus, const std::vector<int>& order,
                          std::size_t max_decisions)
{
	DecodedRound d;
	const std::size_t n = need.size();
	std::vector<bool> taken(n, false);
	int left = free_gpus;
	bool deciding = true;
	for (int r : order) {
		if (r < 0 || static_cast<std::size_t>(r) >= n || taken[static_cast<std::size_t>(r)])
			continue;
		const int nr = need[static_cast<std::size_t>(r)];
		if (nr > left)
			continue;  // never fits later in the round: free GPUs only shrink
		if (deciding) {
			// Is the round already decided? Every valid row fits together in what is left.
			long sum = 0;
			for (std::size_t i = 0; i < n; ++i)
				if (!taken[i] && need[i] <= left)
					sum += need[i];
			if (sum <= left || d.chosen.size() >= max_decisions)
				deciding = false;
		}
		if (deciding) {
			d.chosen.push_back(r);
			d.left.push_back(left);
		}
		taken[static_cast<std::size_t>(r)] = true;
		d.started.push_back(r);
		left -= nr;
	}
	return d;
}

}  // namespace dlsched::models
