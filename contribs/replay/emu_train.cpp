// dlsched-emu-train: an emulated training job for the local cluster. It runs its epochs with the
// per-epoch time its model's measured scaling gives for the GPUs Slurm actually allocated (so that
// placement and allocation decisions change its runtime as on real GPUs), divided by --speedup.
// With --checkpoint FILE it resumes from the progress saved there and saves it after every epoch and
// when Slurm signals it (SIGUSR1: checkpoint and go on; SIGTERM: checkpoint and exit, as on requeue),
// so a preempted and requeued job loses nothing. (Progress reports to the ingest service are the
// profiling issue's.)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <fstream>
#include <thread>

#include "workload/workload.h"

using namespace dlsched;

namespace {

int usage(const char* msg)
{
	std::fprintf(stderr,
	             "dlsched-emu-train: %s\n"
	             "usage: dlsched-emu-train --model NAME --epochs N --epoch-time-1gpu SECONDS [--speedup X]\n"
	             "                         [--gpus G] [--nodes N] [--profiles DIR] [--checkpoint FILE]\n"
	             "GPUs and nodes default to what Slurm gave the job (CUDA_VISIBLE_DEVICES, SLURM_JOB_NUM_NODES).\n",
	             msg);
	return 2;
}

std::atomic<int> last_signal{0};

extern "C" void on_signal(int sig)
{
	last_signal = sig;
}

double read_checkpoint(const std::string& path)
{
	std::ifstream in(path);
	double done = 0;
	if (in && (in >> done) && done > 0)
		return done;
	return 0;
}

void write_checkpoint(const std::string& path, double done)
{
	if (path.empty())
		return;
	const std::string tmp = path + ".tmp";
	{
		std::ofstream out(tmp);
		out.precision(17);
		out << done << "\n";
	}
	std::rename(tmp.c_str(), path.c_str());
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
	std::string model, profiles, checkpoint;
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
		else if (a == "--checkpoint")
			checkpoint = v;
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
	const double done0 = checkpoint.empty() ? 0.0 : std::min(epochs, read_checkpoint(checkpoint));
	std::signal(SIGUSR1, on_signal);
	std::signal(SIGTERM, on_signal);
	std::printf("dlsched-emu-train: model %s, %d GPU(s) on %d node(s), %.6g epochs of %.3f s, from epoch %.4g\n",
	            model.c_str(), gpus, nodes, epochs, per_epoch, done0);
	std::fflush(stdout);
	const auto start = std::chrono::steady_clock::now();
	auto progress = [&]() {
		const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		return std::min(epochs, done0 + t / per_epoch);
	};
	double saved = done0;
	while (true) {
		const double p = progress();
		if (const int sig = last_signal.exchange(0)) {
			write_checkpoint(checkpoint, p);
			std::printf("signal %d: checkpoint at epoch %.4f\n", sig, p);
			std::fflush(stdout);
			if (sig == SIGTERM)
				return 143;
		}
		if (std::floor(p) > std::floor(saved) || p >= epochs) {
			write_checkpoint(checkpoint, p);
			saved = p;
			std::printf("epoch %.0f done\n", std::floor(p));
			std::fflush(stdout);
		}
		if (p >= epochs)
			break;
		const double left = (std::min(epochs, std::floor(p) + 1) - p) * per_epoch;
		std::this_thread::sleep_for(std::chrono::duration<double>(std::clamp(left, 0.001, 0.05)));
	}
	return 0;
}
