// Rng: a small seeded generator (splitmix64) with its own uniform and choice functions. The standard
// library's distributions differ between implementations; ours give the same numbers everywhere.
#ifndef DLSCHED_UTIL_RANDOM_H
#define DLSCHED_UTIL_RANDOM_H

#include <cmath>
#include <cstdint>

namespace dlsched {

class Rng {
public:
	// `stream` separates independent uses of one seed (model choice, elastic marks, ...), so that
	// turning one option on does not change the draws of another.
	explicit Rng(std::uint64_t seed, std::uint64_t stream = 0)
	    : state_(seed * 0x9E3779B97F4A7C15ull ^ (stream + 1) * 0xD1B54A32D192ED03ull)
	{
	}

	std::uint64_t next()
	{
		std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		return z ^ (z >> 31);
	}
	// Uniform in [0, 1).
	double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
	// Uniform integer in [0, n).
	std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
	// Exponential with the given mean.
	double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }
	// Standard normal (Box-Muller).
	double normal()
	{
		double u1 = uniform(), u2 = uniform();
		return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2);
	}

private:
	std::uint64_t state_;
};

}  // namespace dlsched

#endif
