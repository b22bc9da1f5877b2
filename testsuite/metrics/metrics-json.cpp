// dlsched-sim's metrics of hand-written job outcomes (testsuite/metrics/outcomes.csv): prints the
// JSON that `dlsched-sim run --json` writes for a run with these outcomes. test-metrics-agree.sh
// compares it with what dlsched-report computes from the same outcomes as sacct records.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "contribs/sim/metrics.h"

using namespace dlsched;

int main(int argc, char** argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: metrics-json OUTCOMES.csv\n");
		return 2;
	}
	std::ifstream in(argv[1]);
	if (!in) {
		std::fprintf(stderr, "metrics-json: %s: cannot open\n", argv[1]);
		return 2;
	}
	sim::SimResult r;
	Workload w;
	std::string line;
	int n = 0;
	while (std::getline(in, line)) {
		++n;
		if (line.empty() || line[0] == '#')
			continue;
		std::vector<std::string> f;
		std::stringstream ss(line);
		for (std::string x; std::getline(ss, x, ',');)
			f.push_back(x);
		if (line.back() == ',')
			f.emplace_back();
		if (f.size() != 11) {
			std::fprintf(stderr, "metrics-json: %s:%d: expected 11 fields, got %zu\n", argv[1], n,
				     f.size());
			return 2;
		}
		sim::JobOutcome o;
		o.id = static_cast<JobId>(std::stoul(f[0]));
		o.qos = f[2];
		o.submit = std::stod(f[3]);
		o.cancelled = f[10] == "CANCELLED";
		o.first_start = f[4].empty() ? -1 : std::stod(f[4]);
		o.finish = std::stod(f[5]);
		const double gpus = std::stod(f[6]);
		o.gpu_seconds = o.cancelled ? 0 : gpus * (o.finish - o.first_start);
		o.preemptions = std::stoi(f[7]);
		o.resizes = std::stoi(f[8]);
		if (!f[9].empty())
			o.deadline = std::stod(f[9]);
		r.makespan = std::max(r.makespan, o.finish);
		r.jobs.push_back(o);
		w.trace_runtime_s.resize(std::max<std::size_t>(w.trace_runtime_s.size(), o.id), 0.0);
	}
	std::cout << sim::to_json(sim::compute_metrics("fixture", r, w)).dump() << "\n";
	return 0;
}
