// The time scales of a site, as the learned policy reads them (feature schema 3): every time feature
// is a ratio to a running quantile of what the host has seen, so that one model serves a site whose
// jobs run minutes (Philly) and one whose jobs run hours (ITP), and an emulated cluster replaying a
// trace N times faster looks to the network as the trace does, with no hand-set scale.
//
// Two quantities, each kept as the last kMemory observations (bounded memory; the quantile of that
// window is exact, so multiplying every time by N multiplies the scales by exactly N):
//   - job lengths: a job's estimated run time alone at the GPUs it asked for (what the policies see:
//     predicted or oracle), once per job, in the first cycle that shows it;
//   - waits: a job's first start minus its submit time, once per job, in the first cycle that shows it
//     started.
// The length scale is the median of the lengths; the wait scale is the p90 of the waits (the length
// scale before any wait is seen), at least a tenth of the length scale (on an idle cluster every wait
// is 0).
//
// A model carries the scales it was trained at (ScalePrior: quantile points of both quantities), and a
// policy starts from them: they count as observations until the site's own have pushed them out of
// the window. Without a prior and before any observation, both scales are one hour of the model's
// time (schema 2's absolute hours).
#ifndef DLSCHED_MODELS_TIME_SCALES_H
#define DLSCHED_MODELS_TIME_SCALES_H

#include <cstddef>
#include <vector>

#include "model/cluster_view.h"

namespace dlsched::models {

// Quantile points (seconds, ascending) of job lengths and waits, saved with a model.
struct ScalePrior {
	std::vector<double> length_s;
	std::vector<double> wait_s;
};

// The last `capacity` values of a stream (a ring); quantiles of what it holds.
class QuantileWindow {
public:
	explicit QuantileWindow(std::size_t capacity) : capacity_(capacity) {}
	void add(double v);
	// The q-quantile (0 <= q <= 1) of the values held: the value at rank floor(q * (n - 1)) (a value
	// seen, so scaling every value scales it exactly); 0 when empty.
	double quantile(double q) const;
	std::size_t size() const { return values_.size(); }
	// `points` quantile points of the values held (ascending; empty when nothing is held).
	std::vector<double> points(std::size_t points) const;

private:
	std::size_t capacity_;
	std::size_t next_ = 0;  // where the next value goes once the ring is full
	std::vector<double> values_;
};

class TimeScales {
public:
	static constexpr std::size_t kMemory = 256;  // observations kept per quantity
	static constexpr std::size_t kPriorPoints = 16;

	// `time_scale`: seconds of the model's time per second of the view's clock (ModelTimeScale=):
	// divides the prior (and the one-hour default), which are in the model's time.
	explicit TimeScales(const ScalePrior& prior = ScalePrior(), double time_scale = 1.0);

	// Takes what `view` shows that the scales have not seen: lengths of jobs submitted since the
	// previous view observed, waits of jobs that first started since then. A view at or before the
	// previous one's time adds nothing (the ordering and the allocation of one cycle both call it).
	void observe(const ClusterView& view);

	double length() const { return length_; }  // seconds of the view's clock
	double wait() const { return wait_; }
	std::size_t lengths_seen() const { return lengths_.size(); }

	// Quantile points of what the scales hold now (to save with a model).
	ScalePrior prior() const;

private:
	void update();
	double default_s_;
	QuantileWindow lengths_{kMemory};
	QuantileWindow waits_{kMemory};
	double last_now_;
	double length_ = 3600;
	double wait_ = 3600;
};

// A job's estimated run time alone at the GPUs it asked for (seconds of the view's clock), from what
// the view knows (its epochs and epoch time); 0 when unknown.
double estimated_length(const ClusterView& view, const Job& job);

}  // namespace dlsched::models

#endif
