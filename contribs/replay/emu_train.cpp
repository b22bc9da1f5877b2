// dlsched-emu-train: an emulated training job for the local cluster that speaks the training-job
// protocol (doc/protocol.md) like a real one.
//  - Epoch time: its model's time on one reference GPU over the measured speedup for the GPUs Slurm
//    actually allocated (so placement and allocation change its runtime as on real GPUs), divided
//    by --speedup, times noise: a per-job factor and a per-epoch factor, both log-normal with mean 1
//    (--noise, the coefficient of variation). On a heterogeneous emulated cluster (--node-speeds,
//    written by dlsched-cluster --gpu-types/--node-speed) it is also divided by the speed of the
//    GPUs it runs on: the catalog's speed of the node's GPU type for its model (a K80 trains BERT at
//    half a V100's speed) times the node's own factor (a throttled machine); a job over several
//    nodes runs at its slowest node's. Each run begins with a warm-up of --warmup epochs
//    (data not cached yet, allocator and cuDNN autotuning) inside its first epoch, whole or, after
//    a mid-epoch checkpoint, the rest of one.
//  - Storage traffic: it reads a real file (--data) as it trains, samples_per_epoch x sample_kb of
//    its model per epoch (times --size-scale), spread over the epoch, so that the collector sees
//    the data rate of the model.
//  - Checkpoints: of its model's size (checkpoint_mb x --size-scale), written to a temporary name,
//    synced, renamed; their write and read times are paced at --storage-mbps (in the job's own,
//    uncompressed, seconds, then divided by --speedup) and measured; they are reported at the size
//    they stand for (checkpoint_mb).
//  - Protocol: it reports each epoch and each checkpoint save and load to DLSCHED_PROGRESS_FILE;
//    on the checkpoint signal (DLSCHED_CHECKPOINT_SIGNAL, default SIGUSR1) or SIGTERM it saves at
//    the next iteration (--iteration seconds of wall time, default 0.02) and exits; a new run
//    resumes from the saved progress. Epoch numbers count over the whole job: none is reported
//    twice or skipped across restarts.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../progress/progress_report.h"
#include "util/flag_table.h"
#include "util/node_list.h"
#include "workload/workload.h"

using namespace dlsched;

namespace {

int usage(const char* msg, const std::string& options = "")
{
	std::fprintf(
		stderr,
		"dlsched-emu-train: %s\n"
		"usage: dlsched-emu-train --model NAME --epochs N --epoch-time-1gpu SECONDS [--speedup X]\n"
		"         [--gpus G] [--nodes N] [--profiles DIR] [--checkpoint FILE | --checkpoint-dir "
		"DIR]\n"
		"         [--data FILE] [--size-scale S] [--storage-mbps MB/S] [--noise CV] [--warmup "
		"EPOCHS]\n"
		"         [--iteration SECONDS] [--seed N] [--node-speeds FILE]\n"
		"GPUs and nodes default to what Slurm gave the job (CUDA_VISIBLE_DEVICES, "
		"SLURM_JOB_NUM_NODES);\n"
		"the checkpoint directory to DLSCHED_CHECKPOINT_DIR; progress goes to "
		"DLSCHED_PROGRESS_FILE;\n"
		"--node-speeds to DLSCHED_EMU_NODE_SPEEDS (lines 'NODE GPU_TYPE FACTOR'; the job's nodes "
		"from\n"
		"SLURM_JOB_NODELIST, else SLURMD_NODENAME).\n%s",
		msg, options.c_str());
	return 2;
}

std::atomic<int> last_signal{0};

extern "C" void on_signal(int sig)
{
	last_signal = sig;
}

double now_s()
{
	return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

// Reports progress (doc/protocol.md section 1) through the same code as dlsched-progress.
class Reporter {
public:
	Reporter()
	{
		const char* path = nullptr;
		switch (dls_progress_where(&path)) {
			case DLS_PROGRESS_ON:
				path_ = path;
				break;
			case DLS_PROGRESS_OTHER_VERSION:
				std::fprintf(stderr,
					     "dlsched-emu-train: DLSCHED_PROTOCOL=%s, this job speaks "
					     "version %s; nothing reported\n",
					     std::getenv("DLSCHED_PROTOCOL"), DLS_PROGRESS_PROTOCOL);
				break;
			case DLS_PROGRESS_NO_FILE:
				std::fprintf(stderr,
					     "dlsched-emu-train: DLSCHED_PROTOCOL is set but "
					     "DLSCHED_PROGRESS_FILE is not; "
					     "nothing reported\n");
				break;
			case DLS_PROGRESS_OFF:
				break;
		}
	}
	void epoch(int n, double start, double end) const
	{
		char line[256];
		dls_progress_epoch_line(line, sizeof line, n, start, end);
		write_line(line);
	}
	void checkpoint(const char* kind, double epoch, std::int64_t bytes, double seconds, double at) const
	{
		char line[256];
		dls_progress_checkpoint_line(line, sizeof line, kind, epoch, static_cast<double>(bytes),
					     seconds, at);
		write_line(line);
	}

private:
	void write_line(const char* line) const
	{
		const char* step = "";
		if (!path_.empty() && dls_progress_append(path_.c_str(), line, &step) < 0)
			std::fprintf(stderr, "dlsched-emu-train: cannot report to %s (%s): %s\n",
				     path_.c_str(), step, errno ? std::strerror(errno) : "short write");
	}

	std::string path_;
};

// The checkpoint: a header line with the progress (epochs, fractional) and the last epoch reported,
// padded with zeros to the model's (scaled) checkpoint size. A file of earlier versions holding just
// a number is read as the progress.
struct Saved {
	double progress = 0;
	int reported = 0;
	std::int64_t bytes = 0;
};

bool read_checkpoint(const std::string& path, Saved& s)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		return false;
	std::string head;
	std::getline(in, head);
	char tag[64] = {0};
	double p = 0;
	int r = 0;
	if (std::sscanf(head.c_str(), "%63s 1 progress=%lf reported=%d", tag, &p, &r) == 3 &&
	    std::strcmp(tag, "dlsched-emu-train-checkpoint") == 0) {
		s.progress = p;
		s.reported = r;
	} else if (std::sscanf(head.c_str(), "%lf", &p) == 1) {
		s.progress = p;
		s.reported = static_cast<int>(std::floor(p));
	} else {
		return false;
	}
	// Read the whole file, as a real restore reads the model and optimizer state.
	std::vector<char> buf(1 << 16);
	std::int64_t n = static_cast<std::int64_t>(head.size()) + 1;
	while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0)
		n += in.gcount();
	s.bytes = n;
	return s.progress > 0 && std::isfinite(s.progress);
}

// Writes the checkpoint through a temporary file (synced, then renamed); returns its size, -1 on error.
std::int64_t write_checkpoint(const std::string& path, const Saved& s, std::int64_t size)
{
	const std::string tmp = path + ".tmp";
	const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		std::fprintf(stderr, "dlsched-emu-train: cannot write checkpoint %s: %s\n", tmp.c_str(),
			     std::strerror(errno));
		return -1;
	}
	char head[160];
	const int h = std::snprintf(head, sizeof head,
				    "dlsched-emu-train-checkpoint 1 progress=%.17g reported=%d\n", s.progress,
				    s.reported);
	bool ok = ::write(fd, head, static_cast<size_t>(h)) == h;
	std::vector<char> zeros(1 << 16, 0);
	std::int64_t left = std::max<std::int64_t>(0, size - h);
	while (ok && left > 0) {
		const size_t n = static_cast<size_t>(
			std::min<std::int64_t>(left, static_cast<std::int64_t>(zeros.size())));
		ok = ::write(fd, zeros.data(), n) == static_cast<ssize_t>(n);
		left -= static_cast<std::int64_t>(n);
	}
	ok = ::fdatasync(fd) == 0 && ok;
	ok = ::close(fd) == 0 && ok;
	if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
		std::fprintf(stderr, "dlsched-emu-train: cannot write checkpoint %s: %s\n", path.c_str(),
			     std::strerror(errno));
		return -1;
	}
	return std::max<std::int64_t>(size, h);
}

// Reads the data file cyclically, as a data loader would.
class DataReader {
public:
	explicit DataReader(const std::string& path)
	{
		if (path.empty())
			return;
		fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
		struct stat st {};
		if (fd_ >= 0 && ::fstat(fd_, &st) == 0 && st.st_size > 0)
			size_ = st.st_size;
		if (fd_ < 0 || size_ == 0)
			std::fprintf(stderr,
				     "dlsched-emu-train: cannot read data file %s (%s): no storage traffic\n",
				     path.c_str(), fd_ < 0 ? std::strerror(errno) : "empty");
	}
	~DataReader()
	{
		if (fd_ >= 0)
			::close(fd_);
	}
	DataReader(const DataReader&) = delete;
	DataReader& operator=(const DataReader&) = delete;

	void read(std::int64_t bytes)
	{
		while (size_ > 0 && bytes > 0) {
			const std::int64_t n = std::min<std::int64_t>(
				{bytes, static_cast<std::int64_t>(buf_.size()), size_ - pos_});
			const ssize_t got = ::pread(fd_, buf_.data(), static_cast<size_t>(n), pos_);
			if (got <= 0)
				return;
			bytes -= got;
			pos_ = (pos_ + got) % size_;
		}
	}

private:
	int fd_ = -1;
	std::int64_t size_ = 0, pos_ = 0;
	std::vector<char> buf_ = std::vector<char>(1 << 16);
};

bool parse_double(const char* v, double& out)
{
	char* end = nullptr;
	out = std::strtod(v, &end);
	return end != v && !*end && std::isfinite(out) && !std::strpbrk(v, "xXpP");
}

// DLSCHED_CHECKPOINT_SIGNAL: a name with or without "SIG"; unset means SIGUSR1; 0 if unknown.
int signal_number(const char* name)
{
	static const struct {
		const char* name;
		int sig;
	} known[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM},
		     {"INT", SIGINT},   {"HUP", SIGHUP},   {"URG", SIGURG}};
	if (!name || !*name)
		return SIGUSR1;
	if (!std::strncmp(name, "SIG", 3))
		name += 3;
	for (const auto& k : known)
		if (!std::strcmp(k.name, name))
			return k.sig;
	return 0;
}

// One node of a heterogeneous emulated cluster (dlsched-cluster's node speeds file).
struct NodeSpeed {
	std::string gpu_type;
	double factor = 1;
};

// Reads 'NODE GPU_TYPE FACTOR' lines ('#' comments). False, with the reason, on a bad file.
bool read_node_speeds(const std::string& path, std::map<std::string, NodeSpeed>& out, std::string& why)
{
	std::ifstream in(path);
	if (!in) {
		why = path + ": " + std::strerror(errno);
		return false;
	}
	std::string line;
	for (int n = 1; std::getline(in, line); ++n) {
		const std::size_t hash = line.find('#');
		std::istringstream words(line.substr(0, hash));
		std::string node, type, factor, extra;
		if (!(words >> node))
			continue;
		double f = 0;
		if (!(words >> type >> factor) || (words >> extra) || !parse_double(factor.c_str(), f) ||
		    !(f > 0)) {
			why = path + ":" + std::to_string(n) +
			      ": expected 'NODE GPU_TYPE FACTOR' with FACTOR > 0";
			return false;
		}
		out[node] = {type, f};
	}
	return true;
}

}  // namespace

int main(int argc, char** argv)
{
	std::string model, profiles, checkpoint, data, node_speeds;
	double epochs = 0, epoch_1gpu = 0, speedup_factor = 1, size_scale = 1e-4, storage_mbps = 500,
	       noise = 0.03, warmup = 0, seed_arg = -1, iteration = 0.02;
	int gpus = 0, nodes = 0;
	std::string checkpoint_dir;
	FlagTable flags({
		string_flag("--model", "NAME", "the model (a name in the profiles)", &model),
		number_flag("--epochs", "N", "epochs to train in all", &epochs, 0),
		number_flag("--epoch-time-1gpu", "SECONDS", "an epoch on one reference GPU", &epoch_1gpu, 0),
		number_flag("--speedup", "X", "replay X times faster than real time (default 1)",
			    &speedup_factor, 0),
		int_flag("--gpus", "G", "GPUs of the job (default: Slurm's)", &gpus, 0),
		int_flag("--nodes", "N", "its nodes (default: Slurm's)", &nodes, 0),
		string_flag("--profiles", "DIR", "the model profiles", &profiles),
		string_flag("--checkpoint", "FILE", "the checkpoint file", &checkpoint),
		string_flag("--checkpoint-dir", "DIR", "the checkpoint directory (emu-train.ckpt in it)",
			    &checkpoint_dir),
		string_flag("--data", "FILE", "the data it reads each epoch", &data),
		number_flag("--size-scale", "S", "checkpoint and data sizes x S (default 1e-4)", &size_scale,
			    0),
		number_flag("--storage-mbps", "MB/S", "storage bandwidth (default 500)", &storage_mbps, 0),
		number_flag("--noise", "CV", "epoch time variation (default 0.03)", &noise, 0, 1),
		number_flag("--warmup", "EPOCHS", "slower first epochs (default 0)", &warmup, 0),
		number_flag("--iteration", "SECONDS", "one training iteration (default 0.02)", &iteration, 0),
		number_flag("--seed", "N", "random seed", &seed_arg),
		string_flag("--node-speeds", "FILE", "lines 'NODE GPU_TYPE FACTOR'", &node_speeds),
	});
	if (Status st = flags.parse(argc, argv); !st.is_ok())
		return usage(st.message().c_str());
	if (flags.help_asked())
		return usage("emulated training job", flags.options_help()), 0;
	if (!checkpoint_dir.empty())
		checkpoint = checkpoint_dir + "/emu-train.ckpt";
	if (Status st = flags.exclusive({"--checkpoint", "--checkpoint-dir"}); !st.is_ok())
		return usage(st.message().c_str());
	if (model.empty() || epochs <= 0 || epoch_1gpu <= 0 || speedup_factor <= 0)
		return usage("--model, --epochs > 0, --epoch-time-1gpu > 0 and --speedup > 0 are required");
	if (size_scale < 0 || storage_mbps <= 0 || noise < 0 || noise > 1 || warmup < 0 || iteration <= 0)
		return usage(
			"need --size-scale >= 0, --storage-mbps > 0, 0 <= --noise <= 1, --warmup >= 0 and "
			"--iteration > 0");
	if (checkpoint.empty())
		if (const char* dir = std::getenv("DLSCHED_CHECKPOINT_DIR"); dir && *dir)
			checkpoint = std::string(dir) + "/emu-train.ckpt";
	const int ckpt_signal = signal_number(std::getenv("DLSCHED_CHECKPOINT_SIGNAL"));
	if (ckpt_signal == 0)
		return usage(
			"DLSCHED_CHECKPOINT_SIGNAL names no signal this job handles (USR1, USR2, TERM, INT, "
			"HUP, URG)");
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
	const ModelProfile& prof = catalog->at(m);
	// The speed of the GPUs it runs on (1: the reference type, or a homogeneous cluster).
	double gpu_speed = 1;
	std::string where;
	if (node_speeds.empty())
		if (const char* env = std::getenv("DLSCHED_EMU_NODE_SPEEDS"))
			node_speeds = env;
	if (!node_speeds.empty()) {
		std::map<std::string, NodeSpeed> speeds;
		std::string why;
		if (!read_node_speeds(node_speeds, speeds, why)) {
			std::fprintf(stderr, "dlsched-emu-train: --node-speeds %s\n", why.c_str());
			return 1;
		}
		const char* list = std::getenv("SLURM_JOB_NODELIST");
		const char* self = std::getenv("SLURMD_NODENAME");
		std::vector<std::string> mine;
		expand_node_list(list ? list : "", mine);  // empty when it has another form
		if (mine.empty() && self)
			mine.push_back(self);
		double slowest = INFINITY;
		for (const std::string& n : mine) {
			auto it = speeds.find(n);
			const double s = it == speeds.end() ? 1.0
							    : catalog->gpu_speed(m, it->second.gpu_type) *
								      it->second.factor;
			if (s < slowest) {
				slowest = s;
				where = n + (it == speeds.end() ? std::string(" (not listed)")
								: " (" + it->second.gpu_type + ")");
			}
		}
		if (std::isfinite(slowest) && slowest > 0)
			gpu_speed = slowest;
	}
	const double base_epoch = epoch_1gpu / catalog->speedup(m, gpus, nodes) / speedup_factor / gpu_speed;
	const std::int64_t data_per_epoch =
		static_cast<std::int64_t>(prof.samples_per_epoch * prof.sample_kb * 1000.0 * size_scale);
	const std::int64_t ckpt_bytes = static_cast<std::int64_t>(prof.checkpoint_mb * 1e6 * size_scale);
	// Reported at the size it stands for, the size its paced time is for: the bandwidth a
	// controller measures from the reports is the emulated storage's, whatever --size-scale wrote.
	const std::int64_t reported_bytes =
		prof.checkpoint_mb > 0 ? static_cast<std::int64_t>(prof.checkpoint_mb * 1e6) : ckpt_bytes;
	// Paced storage: the real (uncompressed) time to move the checkpoint, compressed like the epochs.
	const double ckpt_io_s = prof.checkpoint_mb / storage_mbps / speedup_factor;

	// Noise: one factor per job and one per epoch, log-normal with mean 1 and this coefficient of
	// variation. Seeded by the job, so that a restart draws the same job factor.
	const char* jid = std::getenv("SLURM_JOB_ID");
	const char* restart_env = std::getenv("SLURM_RESTART_COUNT");
	const unsigned long seed = seed_arg >= 0 ? static_cast<unsigned long>(seed_arg)
				   : jid         ? std::strtoul(jid, nullptr, 10)
						 : 1UL;
	const unsigned long restart = restart_env ? std::strtoul(restart_env, nullptr, 10) : 0UL;
	const double sigma = std::sqrt(std::log(1 + noise * noise));
	std::mt19937_64 job_rng(seed);
	std::lognormal_distribution<double> factor(-sigma * sigma / 2, sigma);
	const double job_factor = noise > 0 ? factor(job_rng) : 1.0;
	std::mt19937_64 rng(seed * 1000003UL + restart);
	// An epoch's time; the first of a run holds the warm-up, whatever share of an epoch is left.
	auto epoch_time = [&](double first_share) {
		return base_epoch * job_factor * (noise > 0 ? factor(rng) : 1.0) *
		       (first_share > 0 ? 1 + warmup / first_share : 1.0);
	};

	const Reporter report;
	Saved saved;
	if (!checkpoint.empty()) {
		const double t0 = now_s();
		if (read_checkpoint(checkpoint, saved)) {
			// Pace the read like the write: reading back the model and optimizer state.
			const double left = ckpt_io_s - (now_s() - t0);
			if (left > 0)
				std::this_thread::sleep_for(std::chrono::duration<double>(left));
			const double t1 = now_s();
			saved.progress = std::min(epochs, saved.progress);
			report.checkpoint("load", saved.progress, reported_bytes, t1 - t0, t1);
		}
	}
	std::signal(SIGUSR1, on_signal);
	std::signal(SIGTERM, on_signal);
	std::signal(ckpt_signal, on_signal);
	std::printf(
		"dlsched-emu-train: model %s, %d GPU(s) on %d node(s), %.6g epochs of %.3f s, from epoch "
		"%.4g\n",
		model.c_str(), gpus, nodes, epochs, base_epoch, saved.progress);
	if (!where.empty())
		std::printf("dlsched-emu-train: GPU speed %.4g of the reference (slowest node: %s)\n",
			    gpu_speed, where.c_str());
	std::fflush(stdout);

	DataReader reader(data);
	double progress = saved.progress;  // epochs done, fractional
	int reported = saved.reported;     // last epoch reported (whole job)
	double this_epoch = epoch_time(std::min(epochs, std::floor(progress + 1e-9) + 1) - progress);
	double epoch_start = now_s(), last = epoch_start;
	double data_due = 0;  // bytes owed to the reader
	auto save = [&]() {
		if (checkpoint.empty())
			return;
		const Saved s{progress, reported, 0};
		const double t0 = now_s();
		const std::int64_t n = write_checkpoint(checkpoint, s, ckpt_bytes);
		if (n < 0)
			return;
		const double left = ckpt_io_s - (now_s() - t0);
		if (left > 0)
			std::this_thread::sleep_for(std::chrono::duration<double>(left));
		const double t1 = now_s();
		report.checkpoint("save", progress, reported_bytes, t1 - t0, t1);
	};
	while (progress < epochs) {
		bool answered = false;  // the checkpoint request is answered by this iteration's epoch save
		// The end of the current epoch (the job's last one may be a fraction).
		const double target = std::min(epochs, std::floor(progress + 1e-9) + 1);
		// One iteration, never past the epoch's end.
		std::this_thread::sleep_for(std::chrono::duration<double>(
			std::clamp((target - progress) * this_epoch, 0.0, iteration)));
		const double t = now_s();
		const double before = progress;
		progress = std::min(target, progress + (t - last) / this_epoch);
		last = t;
		data_due += (progress - before) * static_cast<double>(data_per_epoch);
		if (data_due >= 1) {
			reader.read(static_cast<std::int64_t>(data_due));
			data_due -= std::floor(data_due);
		}
		if (progress >= target - 1e-9) {
			progress = target;
			const int n = static_cast<int>(std::ceil(progress - 1e-9));
			if (n > reported) {
				reported = n;
				report.epoch(n, epoch_start, t);
				std::printf("epoch %d done\n", n);
				std::fflush(stdout);
			}
			this_epoch = epoch_time(0);
			// A checkpoint at every epoch boundary, as training scripts do; the next epoch's time
			// starts after it. A request that came before it ended is answered by it.
			save();
			answered = last_signal.load() != 0;
			last = epoch_start = now_s();
		}
		if (const int sig = last_signal.exchange(0)) {
			if (!answered)
				save();
			std::printf("signal %d: checkpoint at epoch %.4f\n", sig, progress);
			std::fflush(stdout);
			if (sig == SIGTERM || sig == ckpt_signal)
				return 143;
		}
	}
	return 0;
}
