// dlsched-train's learning curve: one CSV writer and one chart writer (gnuplot), the only plotting
// path of the training tools.
#ifndef DLSCHED_TRAIN_CURVE_H
#define DLSCHED_TRAIN_CURVE_H

#include <cmath>
#include <cstdio>
#include <string>

#include "util/status.h"

namespace dlsched::train {

struct CurvePoint {
	int iteration = 0;
	double seconds = 0;
	int episodes = 0;
	std::size_t rounds = 0;
	double train_slowdown = NAN;  // NAN: not measured (written empty)
	double val_slowdown = NAN;
	double best_val_slowdown = NAN;
	double policy_loss = NAN, value_loss = NAN, entropy = NAN;
};

class CurveCsv {
public:
	// Opens `path` (appending when `append`, else writing the header).
	static Result<CurveCsv*> open(const std::string& path, bool append);
	void add(const CurvePoint& p);
	~CurveCsv();

private:
	std::FILE* f_ = nullptr;
};

// Draws the curve in `csv` (validation and training slowdown by iteration) into `png` with gnuplot;
// says on stderr what to install when gnuplot is missing.
void write_chart(const std::string& csv, const std::string& png);

}  // namespace dlsched::train

#endif
