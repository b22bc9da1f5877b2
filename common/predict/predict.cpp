#include "predict/predict.h"

#include <algorithm>
#include <cmath>

namespace dlsched::predict {

namespace {

struct Moments {
	double mean = 0;
	double sd = 0;  // sample standard deviation (0 for fewer than two values)
	std::size_t n = 0;
};

Moments moments(const std::vector<double>& v)
{
	Moments m;
	m.n = v.size();
	if (v.empty())
		return m;
	double sum = 0;
	for (double x : v)
		sum += x;
	m.mean = sum / static_cast<double>(v.size());
	if (v.size() >= 2) {
		double ss = 0;
		for (double x : v)
			ss += (x - m.mean) * (x - m.mean);
		m.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
	}
	return m;
}

// The spread of a new draw around a mean estimated from n draws: sd x sqrt(1 + 1/n).
double predictive_sd(const Moments& m)
{
	return m.n >= 2 ? m.sd * std::sqrt(1.0 + 1.0 / static_cast<double>(m.n)) : 0.0;
}

}  // namespace

Estimate mean_of(const std::vector<double>& values)
{
	const Moments m = moments(values);
	return {m.mean, predictive_sd(m), m.n};
}

namespace {
double median_of(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	const std::size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace

std::vector<double> without_outliers(const std::vector<double>& values)
{
	if (values.size() < 3)
		return values;
	const double med = median_of(values);
	std::vector<double> dev;
	for (double x : values)
		dev.push_back(std::fabs(x - med));
	const double scale = std::max(1.4826 * median_of(dev), 0.05 * std::fabs(med));
	std::vector<double> kept;
	for (double x : values)
		if (std::fabs(x - med) <= kOutlierScales * scale)
			kept.push_back(x);
	return kept;
}

namespace {

// Seconds per byte of past transfers (only those with both a size and a time).
Moments seconds_per_byte(const std::vector<Transfer>& past)
{
	std::vector<double> v;
	for (const Transfer& t : past)
		if (t.bytes > 0 && t.seconds >= 0)
			v.push_back(t.seconds / static_cast<double>(t.bytes));
	return moments(v);
}

// Adds the time to move `bytes` at the measured seconds per byte (and its spread) to a sum.
void add_transfer(const Moments& spb, std::int64_t bytes, double& value, double& var, std::size_t& samples)
{
	if (spb.n == 0 || bytes <= 0)
		return;
	const double b = static_cast<double>(bytes);
	value += b * spb.mean;
	var += (b * predictive_sd(spb)) * (b * predictive_sd(spb));
	samples += spb.n;
}

}  // namespace

Estimate steady_epoch_time(const std::vector<double>& epoch_s)
{
	std::vector<double> kept;
	for (std::size_t i = epoch_s.size() >= 3 ? 1 : 0; i < epoch_s.size(); ++i)
		if (epoch_s[i] > 0)
			kept.push_back(epoch_s[i]);
	const Moments m = moments(kept);
	return {m.mean, m.sd, m.n};
}

Estimate remaining_time(const std::vector<double>& epoch_s, double epochs_total, double epochs_done)
{
	const Estimate e = steady_epoch_time(epoch_s);
	if (!e.known())
		return {};
	const double left = std::max(0.0, epochs_total - epochs_done);
	const double noise = left * e.stddev * e.stddev;
	const double mean_err = left * e.stddev / std::sqrt(static_cast<double>(e.samples));
	return {left * e.value, std::sqrt(noise + mean_err * mean_err), e.samples};
}

Estimate runtime_from_history(const ModelCatalog& models, int model, const std::vector<PastJob>& history,
			      double epochs, int gpus, int nodes)
{
	std::vector<double> one_gpu;  // each past job's epoch time on one GPU
	Estimate single;
	double single_speedup = 1;
	for (const PastJob& h : history) {
		const Estimate e = steady_epoch_time(h.epoch_s);
		if (!e.known())
			continue;
		const double s = models.speedup(model, std::max(1, h.gpus), std::max(1, h.nodes));
		one_gpu.push_back(e.value * s);
		single = e;
		single_speedup = s;
	}
	if (one_gpu.empty() || epochs <= 0)
		return {};
	const double target = models.speedup(model, std::max(1, gpus), std::max(1, nodes));
	const Moments m = moments(without_outliers(one_gpu));
	const double per_epoch = m.mean / target;
	double sd = 0;
	if (m.n >= 2) {
		sd = epochs * predictive_sd(m) / target;
	} else {
		// One job: its own epoch noise, carried to the new job's GPU count, over its epochs.
		const double sigma = single.stddev * single_speedup / target;
		const double mean_err = epochs * sigma / std::sqrt(static_cast<double>(single.samples));
		sd = std::sqrt(epochs * sigma * sigma + mean_err * mean_err);
	}
	return {epochs * per_epoch, sd, m.n};
}

Estimate epochs_from_traffic(const std::vector<std::int64_t>& bytes_per_epoch, std::int64_t bytes_read_so_far)
{
	std::vector<double> v;
	for (std::int64_t b : bytes_per_epoch)
		if (b > 0)
			v.push_back(static_cast<double>(b));
	const Moments m = moments(v);
	if (m.n == 0 || bytes_read_so_far < 0)
		return {};
	const double value = static_cast<double>(bytes_read_so_far) / m.mean;
	const double rel_err = m.sd / (m.mean * std::sqrt(static_cast<double>(m.n)));
	return {value, value * rel_err, m.n};
}

Estimate suspend_cost(const Estimate& epoch, double fraction_done, std::int64_t checkpoint_bytes,
		      const std::vector<Transfer>& past_saves)
{
	const double rest = 1.0 - std::clamp(fraction_done, 0.0, 1.0);
	double value = epoch.known() ? rest * epoch.value : 0;
	double var = epoch.known() ? (rest * epoch.stddev) * (rest * epoch.stddev) : 0;
	std::size_t samples = epoch.samples;
	add_transfer(seconds_per_byte(past_saves), checkpoint_bytes, value, var, samples);
	if (samples == 0)
		return {};
	return {value, std::sqrt(var), samples};
}

Estimate resume_cost(std::int64_t checkpoint_bytes, const std::vector<Transfer>& past_loads,
		     const std::vector<Warmup>& past_warmups)
{
	double value = 0, var = 0;
	std::size_t samples = 0;
	add_transfer(seconds_per_byte(past_loads), checkpoint_bytes, value, var, samples);
	std::vector<double> extra;
	for (const Warmup& w : past_warmups)
		if (w.first_epoch_s > 0 && w.steady_epoch_s > 0)
			extra.push_back(w.first_epoch_s - w.steady_epoch_s);
	const Moments wm = moments(extra);
	if (wm.n > 0) {
		value += std::max(0.0, wm.mean);
		var += predictive_sd(wm) * predictive_sd(wm);
		samples += wm.n;
	}
	if (samples == 0)
		return {};
	return {value, std::sqrt(var), samples};
}

}  // namespace dlsched::predict
