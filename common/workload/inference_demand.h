// Inference demand over time (capacity loaning, Aryl): the fraction of the inference partition's GPUs
// that inference needs, as a step function read from a `time_s,demand` CSV file.
#ifndef DLSCHED_WORKLOAD_INFERENCE_DEMAND_H
#define DLSCHED_WORKLOAD_INFERENCE_DEMAND_H

#include <string>
#include <vector>

#include "model/types.h"
#include "util/status.h"

namespace dlsched {

class InferenceDemand {
public:
	struct Point {
		Seconds time = 0;   // seconds since the series' start
		double demand = 0;  // in [0, 1]
	};

	// Reads `path`: '#' comments, an optional header `time_s,demand`, then rows with strictly
	// increasing times >= 0 and demands in [0, 1]. Errors name the file and line.
	static Result<InferenceDemand> load(const std::string& path);
	// The same from text already read (`source` names it in errors).
	static Result<InferenceDemand> parse(const std::string& text, const std::string& source);

	bool empty() const { return points_.empty(); }
	const std::vector<Point>& points() const { return points_; }
	// The series' length: it repeats with this period (last time + the last step; one point: a day).
	Seconds period() const { return period_; }

	// Demand at `t` seconds since the series' start (the value of the last point at or before t,
	// repeated every period(); before the first point, the first point's value).
	double at(Seconds t) const;
	// The first time after `t` at which the value may change (INFINITY for a constant series).
	Seconds next_change(Seconds t) const;

private:
	std::vector<Point> points_;
	Seconds period_ = 86400;
};

}  // namespace dlsched

#endif
