// dlsched-emu-train: an emulated training job for the local cluster. It runs its epochs with the
// per-epoch time its model's measured scaling gives for the GPUs Slurm actually allocated (so that
// placement and allocation decisions change its runtime as on real GPUs), divided by --speedup.
// (The full training-job protocol - progress reports, checkpoint signal, resume - is the profiling
// issue's; this is the timing core.)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "workload/workload.h"

using namespace dlsched;

namespace {

int usage(const char* msg)
{
	std::fprintf(stderr,
	             "dlsched-emu-train: %s\n"
	             "usage: dlsched-emu-train --model NAME --epochs N --epoch-time-1gpu SECONDS [--speedup X]\n"
	             "                         [--gpus G] [--nodes N] [--profiles DIR]\n"
	             "GPUs and nodes default to what Slurm gave the job (CUDA_VISIBLE_DEVICES, SLURM_JOB_NUM_NODES).\n",
	             msg);
	return 2;
}

int count_devices(const char* list)
{
	if (!list || !*list)
		return 0;
	int n = 1;
	for (const char* p = list; *p; ++p)
		n += *p == ',';
	return n;
}

}  // namespace

int main(int argc, char** argv)
{
	std::string model, profiles;
	double epochs = 0, epoch_1gpu = 0, speedup_factor = 1;
	int gpus = 0, nodes = 0;
	for (int i = 1; i < argc; ++i) {
		std::string a = argv[i];
		if (a == "-h" || a == "--help")
			return usage("emulated training job"), 0;
		if (i + 1 >= argc)
			return usage(("missing value for " + a).c_str());
		const char* v = argv[++i];
		char* end = nullptr;
		if (a == "--model")
			model = v;
		else if (a == "--profiles")
			profiles = v;
		else if (a == "--epochs")
			epochs = std::strtod(v, &end);
		else if (a == "--epoch-time-1gpu")
			epoch_1gpu = std::strtod(v, &end);
		else if (a == "--speedup")
			speedup_factor = std::strtod(v, &end);
		else if (a == "--gpus")
			gpus = static_cast<int>(std::strtol(v, &end, 10));
		else if (a == "--nodes")
			nodes = static_cast<int>(std::strtol(v, &end, 10));
		else
			return usage(("unknown option " + a).c_str());
		if (end && *end)
			return usage((a + " '" + v + "' is not a number").c_str());
	}
	if (model.empty() || epochs <= 0 || epoch_1gpu <= 0 || speedup_factor <= 0)
		return usage("--model, --epochs > 0, --epoch-time-1gpu > 0 and --speedup > 0 are required");
	if (gpus <= 0) {
		// Per node, as Slurm exports it; the job's total is per node x nodes.
		gpus = count_devices(std::getenv("CUDA_VISIBLE_DEVICES"));
		if (gpus <= 0)
			gpus = 1;
		const char* nn = std::getenv("SLURM_JOB_NUM_NODES");
		nodes = nn ? std::atoi(nn) : 1;
		gpus *= std::max(1, nodes);
	}
	nodes = std::max(1, nodes);
	auto catalog = load_model_catalog(profiles);
	if (!catalog.is_ok()) {
		std::fprintf(stderr, "dlsched-emu-train: %s\n", catalog.status().message().c_str());
		return 1;
	}
	const int m = catalog->find(model);
	if (m < 0) {
		std::fprintf(stderr, "dlsched-emu-train: unknown model '%s'\n", model.c_str());
		return 1;
	}
	const double per_epoch = epoch_1gpu / catalog->speedup(m, gpus, nodes) / speedup_factor;
	std::printf("dlsched-emu-train: model %s, %d GPU(s) on %d node(s), %.6g epochs of %.3f s\n", model.c_str(), gpus,
	            nodes, epochs, per_epoch);
	std::fflush(stdout);
	const auto start = std::chrono::steady_clock::now();
	const int whole = static_cast<int>(std::ceil(epochs));
	for (int e = 1; e <= whole; ++e) {
		const double len = per_epoch * std::min(1.0, epochs - (e - 1));  // a fractional last epoch
		std::this_thread::sleep_until(start + std::chrono::duration<double>(per_epoch * (e - 1) + len));
		std::printf("epoch %d done at %.3f s\n", e,
		            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
		std::fflush(stdout);
	}
	return 0;
}
