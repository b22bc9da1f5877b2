#include "generator.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <vector>

#include "util/random.h"

namespace dlsched::sim {

void generate_trace(const GeneratorOptions& opt, const ModelCatalog& models, std::ostream& out)
{
	Rng rng(opt.seed, 11);
	const double mu = 6.79, sigma = 2.16, cap = 7 * 86400.0;
	// Mean GPU-seconds per job: E[gpus] x E[min(duration, cap)], estimated by sampling once.
	Rng probe(opt.seed, 12);
	double mean_dur = 0;
	for (int k = 0; k < 20000; ++k)
		mean_dur += std::min(cap, std::exp(mu + sigma * probe.normal()));
	mean_dur /= 20000;
	const double mean_gpus = 0.93 * 1 + 0.07 / 3 * (2 + 4 + 8);
	const double gap = mean_gpus * mean_dur / (opt.cluster_gpus * opt.load);

	static const std::vector<std::vector<const char*>> kBuckets = {
		{"cifar10", "ncf"}, {"deepspeech2", "yolov3"}, {"imagenet", "bert"}};
	out << "submit_s,gpus,model,epochs,duration_s,user\n";
	out << std::setprecision(10);
	double t = 0;
	for (std::size_t i = 0; i < opt.jobs; ++i) {
		const double u = rng.uniform();
		const int gpus = u < 0.93 ? 1 : u < 0.93 + 0.07 / 3 ? 2 : u < 0.93 + 0.14 / 3 ? 4 : 8;
		const double dur = std::max(30.0, std::min(cap, std::exp(mu + sigma * rng.normal())));
		const double gpu_h = dur * gpus / 3600;
		const auto& bucket = kBuckets[gpu_h < 1 ? 0 : gpu_h < 10 ? 1 : 2];
		const char* model = bucket[rng.below(bucket.size())];
		if (models.find(model) < 0 && models.size() > 0)
			model = models.at(0).name.c_str();
		const double epochs = std::clamp(std::round(dur / 300), 1.0, 1000.0);
		out << std::fixed << std::setprecision(3) << t << "," << gpus << "," << model << ","
		    << static_cast<long>(epochs) << "," << dur << ",u" << rng.below(50) << "\n";
		t += rng.exponential(gap);
	}
}

}  // namespace dlsched::sim
