#include "decode.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <set>
#include <utility>

namespace dlsched::models {

Round::Round(const RoundRows& rows) : rows_(rows), taken_(rows.need.size(), false), left_(rows.free_gpus) {}

bool Round::first_fits() const
{
	for (std::size_t i = 0; i < taken_.size(); ++i)
		if (!taken_[i] && rows_.unit[i] == 0 && rows_.need[i] <= left_)
			return true;
	return false;
}

bool Round::valid(std::size_t r) const
{
	if (ended_ || r >= taken_.size() || taken_[r] || rows_.need[r] > left_)
		return false;
	const int a = rows_.after[r];
	if (a >= 0 && (static_cast<std::size_t>(a) >= taken_.size() || !taken_[static_cast<std::size_t>(a)]))
		return false;
	return rows_.unit[r] >= 0 || !first_fits();
}

std::size_t Round::valid_count() const
{
	std::size_t n = 0;
	for (std::size_t r = 0; r < taken_.size(); ++r)
		n += valid(r) ? 1 : 0;
	return n;
}

bool Round::pick(std::size_t r)
{
	if (!valid(r))
		return false;
	taken_[r] = true;
	left_ -= rows_.need[r];
	if (rows_.unit[r] < 0)
		ended_ = true;
	return true;
}

namespace {

// Greedy play in O(rows log rows): a row becomes available once the row before it is picked, and a
// row that does not fit never fits later in the round (what is left only shrinks), so a heap of
// available rows by score gives each step's argmax; the end row is valid once no first unit fits
// (the smallest untaken first unit is above what is left).
std::vector<int> play_greedy(const RoundRows& rows, const std::vector<float>& scores)
{
	const std::size_t n = rows.need.size();
	std::vector<int> next(n, -1);
	int end_row = -1;
	using Entry = std::pair<float, int>;  // (score, -row): highest score, then lowest row
	std::priority_queue<Entry> heap;
	std::multiset<int> first_needs;
	for (std::size_t r = 0; r < n; ++r) {
		if (rows.unit[r] < 0) {
			end_row = static_cast<int>(r);
			continue;
		}
		if (rows.unit[r] == 0)
			first_needs.insert(rows.need[r]);
		if (rows.after[r] >= 0 && static_cast<std::size_t>(rows.after[r]) < n)
			next[static_cast<std::size_t>(rows.after[r])] = static_cast<int>(r);
		else
			heap.push({scores[r], -static_cast<int>(r)});
	}
	int left = rows.free_gpus;
	std::vector<int> picks;
	for (;;) {
		while (!heap.empty() && rows.need[static_cast<std::size_t>(-heap.top().second)] > left)
			heap.pop();
		const bool end_valid = end_row >= 0 && (first_needs.empty() || *first_needs.begin() > left);
		if (heap.empty() && !end_valid)
			break;
		const std::size_t er = static_cast<std::size_t>(end_row);
		if (end_valid && (heap.empty() || scores[er] > heap.top().first ||
				  (scores[er] == heap.top().first && end_row < -heap.top().second))) {
			picks.push_back(end_row);
			break;
		}
		const int r = -heap.top().second;
		heap.pop();
		const auto ur = static_cast<std::size_t>(r);
		picks.push_back(r);
		left -= rows.need[ur];
		if (rows.unit[ur] == 0)
			first_needs.erase(first_needs.find(rows.need[ur]));
		if (next[ur] >= 0)
			heap.push({scores[static_cast<std::size_t>(next[ur])], -next[ur]});
	}
	return picks;
}

}  // namespace

std::vector<int> play_round(const RoundRows& rows, const std::vector<float>& scores, Rng* rng,
			    double* log_prob)
{
	if (!rng && !log_prob)
		return play_greedy(rows, scores);
	Round round(rows);
	std::vector<int> picks;
	double lp = 0;
	const std::size_t n = rows.need.size();
	// The scores do not change within a round: each row's softmax weight is computed once, relative
	// to the largest score (so none overflows; a tanh network's scores are bounded, so none
	// underflows to nothing that matters).
	float top = -INFINITY;
	for (std::size_t r = 0; r < n; ++r)
		top = std::max(top, scores[r]);
	std::vector<double> weight(n);
	for (std::size_t r = 0; r < n; ++r)
		weight[r] = std::exp(static_cast<double>(scores[r]) - top);
	std::vector<std::size_t> ok;
	ok.reserve(n);
	while (!round.ended()) {
		ok.clear();
		double z = 0;
		std::size_t best = n;
		for (std::size_t r = 0; r < n; ++r)
			if (round.valid(r)) {
				ok.push_back(r);
				z += weight[r];
				if (best == n || scores[r] > scores[best])
					best = r;
			}
		if (ok.empty())
			break;
		std::size_t c = best;
		if (rng && ok.size() > 1) {
			double u = rng->uniform() * z;
			c = ok.back();
			for (std::size_t r : ok) {
				u -= weight[r];
				if (u < 0) {
					c = r;
					break;
				}
			}
		}
		lp += std::log(weight[c] / z);
		round.pick(c);
		picks.push_back(static_cast<int>(c));
	}
	if (log_prob)
		*log_prob = lp;
	return picks;
}

DecodedRound decode_round(const RoundRows& rows, const std::vector<int>& picks, std::size_t max_decisions)
{
	DecodedRound d;
	Round round(rows);
	std::vector<int> played;
	for (int p : picks) {
		if (p < 0 || d.chosen.size() >= max_decisions)
			break;
		const auto r = static_cast<std::size_t>(p);
		const std::size_t choices = round.valid_count();
		const int left = round.left();
		if (!round.pick(r))
			break;
		if (choices > 1) {
			d.chosen.push_back(p);
			d.left.push_back(left);
			d.seq.push_back(static_cast<int>(played.size()));
		}
		played.push_back(p);
	}
	d.pos.assign(rows.need.size(), static_cast<int>(played.size()));
	for (std::size_t k = 0; k < played.size(); ++k)
		d.pos[static_cast<std::size_t>(played[k])] = static_cast<int>(k);
	return d;
}

}  // namespace dlsched::models
