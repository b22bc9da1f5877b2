// dlsched-replay: submits a workload (dlsched-sim's formats) to the running Slurm cluster at the
// trace's arrival times divided by --speedup; each job runs dlsched-emu-train for its epochs. Waits
// until every job has left the queue and writes the trace-to-Slurm job id map.
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits.h>
#include <set>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "workload/workload.h"

using namespace dlsched;

namespace {

const char kUsage[] =
        "usage: dlsched-replay --workload FILE [--speedup X] [--format auto|philly|pollux|dlsched]\n"
        "                      [--max-jobs N] [--seed N] [--gpus-per-node G] [--partition P]\n"
        "                      [--out DIR] [--emu-train PATH] [--no-wait]\n"
        "Submits every job with sbatch at its arrival time / X; needs SLURM_CONF (e.g. . DIR/env.sh of\n"
        "dlsched-cluster). Writes DIR/jobs.csv (trace job, Slurm job id) and the jobs' output in DIR.\n";

// Runs argv, returns its exit status and standard output.
int run(const std::vector<std::string>& args, std::string& out)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		std::vector<char*> argv;
		for (const std::string& a : args)
			argv.push_back(const_cast<char*>(a.c_str()));
		argv.push_back(nullptr);
		execvp(argv[0], argv.data());
		_exit(127);
	}
	close(fd[1]);
	out.clear();
	char buf[4096];
	ssize_t n;
	while ((n = read(fd[0], buf, sizeof buf)) > 0)
		out.append(buf, static_cast<std::size_t>(n));
	close(fd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string self_dir()
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return ".";
	buf[n] = '\0';
	std::string s(buf);
	return s.substr(0, s.rfind('/'));
}

std::string fmt(double v)
{
	char b[64];
	std::snprintf(b, sizeof b, "%.6g", v);
	return b;
}

}  // namespace

int main(int argc, char** argv)
{
	std::string workload, format = "auto", out_dir = "replay-out", partition, emu = self_dir() + "/dlsched-emu-train";
	double speedup = 1;
	long per_node = 8;
	bool wait = true;
	ReadOptions read;
	BuildOptions build;
	for (int i = 1; i < argc; ++i) {
		std::string a = argv[i];
		auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
		const char* v = nullptr;
		if (a == "-h" || a == "--help") {
			std::fputs(kUsage, stdout);
			return 0;
		} else if (a == "--no-wait") {
			wait = false;
			continue;
		}
		v = value();
		if (!v) {
			std::fprintf(stderr, "dlsched-replay: %s needs a value\n%s", a.c_str(), kUsage);
			return 2;
		}
		if (a == "--workload")
			workload = v;
		else if (a == "--format")
			format = v;
		else if (a == "--speedup")
			speedup = std::atof(v);
		else if (a == "--max-jobs")
			build.max_jobs = static_cast<std::size_t>(std::atol(v));
		else if (a == "--seed")
			build.seed = static_cast<std::uint64_t>(std::atol(v));
		else if (a == "--gpus-per-node")
			per_node = std::atol(v);
		else if (a == "--partition")
			partition = v;
		else if (a == "--out")
			out_dir = v;
		else if (a == "--emu-train")
			emu = v;
		else {
			std::fprintf(stderr, "dlsched-replay: unknown option '%s'\n%s", a.c_str(), kUsage);
			return 2;
		}
	}
	if (workload.empty() || speedup <= 0 || per_node <= 0) {
		std::fprintf(stderr, "dlsched-replay: --workload is required; --speedup and --gpus-per-node must be positive\n%s",
		             kUsage);
		return 2;
	}
	if (!std::getenv("SLURM_CONF"))
		std::fprintf(stderr, "dlsched-replay: note: SLURM_CONF is not set; using the system's Slurm\n");
	if (access(emu.c_str(), X_OK) != 0) {
		std::fprintf(stderr, "dlsched-replay: %s is not executable (give --emu-train PATH)\n", emu.c_str());
		return 1;
	}
	auto fmt_r = parse_workload_format(format);
	if (!fmt_r.is_ok()) {
		std::fprintf(stderr, "dlsched-replay: %s\n", fmt_r.status().message().c_str());
		return 2;
	}
	read.format = fmt_r.value();
	auto models = load_model_catalog("");
	if (!models.is_ok()) {
		std::fprintf(stderr, "dlsched-replay: %s\n", models.status().message().c_str());
		return 1;
	}
	auto w = load_workload(workload, read, build, *models);
	if (!w.is_ok()) {
		std::fprintf(stderr, "dlsched-replay: %s\n", w.status().message().c_str());
		return 1;
	}
	std::string mk;
	if (run({"mkdir", "-p", out_dir}, mk) != 0) {
		std::fprintf(stderr, "dlsched-replay: cannot create %s\n", out_dir.c_str());
		return 1;
	}
	const std::string ckpt_dir = out_dir + "/checkpoints";
	if (run({"mkdir", "-p", ckpt_dir}, mk) != 0) {
		std::fprintf(stderr, "dlsched-replay: cannot create %s\n", ckpt_dir.c_str());
		return 1;
	}
	std::ofstream map(out_dir + "/jobs.csv");
	map << "trace_job,slurm_job,submit_s,gpus,model,runtime_s\n";

	const auto t0 = std::chrono::steady_clock::now();
	std::set<std::string> ids;
	std::size_t k = 0;
	for (const Job& j : w->jobs) {
		std::this_thread::sleep_until(t0 + std::chrono::duration<double>(j.submit_time / speedup));
		const long nodes = (j.gpus_requested + per_node - 1) / per_node;
		const long gpn = nodes > 1 ? per_node : j.gpus_requested;
		const long minutes = std::max(1L, static_cast<long>(std::ceil(j.time_limit / speedup / 60.0)));
		const std::string name = models->at(j.model).name;
		const std::string ckpt = ckpt_dir + "/" + std::to_string(j.id);
		std::string wrap = "exec " + emu + " --model " + name + " --epochs " + fmt(j.epochs_total) +
		                   " --epoch-time-1gpu " + fmt(j.epoch_time_1gpu) + " --speedup " + fmt(speedup) +
		                   " --checkpoint " + ckpt;
		// What the dlsched plugins read (plugins/README.md): the model and its epochs, with the epoch
		// time in the replay's compressed seconds.
		const std::string comment = "model=" + name + " epochs=" + fmt(j.epochs_total) +
		                            " epoch_time_1gpu=" + fmt(j.epoch_time_1gpu / speedup);
		std::vector<std::string> args = {"sbatch", "--parsable", "--requeue", "-J", "dl-" + std::to_string(j.id),
		                                 "-N", std::to_string(nodes), "--gres=gpu:" + std::to_string(gpn),
		                                 "--time=" + std::to_string(minutes), "-o", out_dir + "/%j.out",
		                                 "--open-mode=append", "--comment", comment, "--wrap", wrap};
		long deadline_epoch = 0;
		if (j.has_deadline()) {
			const long in_s = std::max(1L, static_cast<long>(std::ceil((j.deadline - j.submit_time) / speedup)));
			deadline_epoch = static_cast<long>(std::time(nullptr)) + in_s;
			args.insert(args.begin() + 1, "--deadline=now+" + std::to_string(in_s) + "seconds");
		}
		if (!partition.empty())
			args.insert(args.begin() + 1, "--partition=" + partition);
		// A controller that is restarting refuses submissions for a while: retry for up to 120 s.
		std::string out;
		int rc = 0;
		for (int attempt = 0;; ++attempt) {
			out.clear();
			rc = run(args, out);
			while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
				out.pop_back();
			if ((rc == 0 && !out.empty()) || attempt >= 60)
				break;
			if (attempt == 0)
				std::fprintf(stderr, "\ndlsched-replay: sbatch failed for trace job %u (exit %d); retrying\n", j.id, rc);
			std::this_thread::sleep_for(std::chrono::seconds(2));
		}
		if (rc != 0 || out.empty()) {
			std::fprintf(stderr, "dlsched-replay: sbatch failed for trace job %u (exit %d) for 120 s; is the cluster up?\n",
			             j.id, rc);
			return 1;
		}
		const std::string id = out.substr(0, out.find(';'));
		ids.insert(id);
		if (deadline_epoch > 0) {
			// sacct has no deadline field: record it in the admin comment (the dlsched plugins do
			// the same for any job; this covers stock Slurm).
			std::string ignored;
			run({"scontrol", "update", "JobId=" + id, "AdminComment=deadline=" + std::to_string(deadline_epoch)},
			    ignored);
		}
		map << j.id << "," << id << "," << fmt(j.submit_time) << "," << j.gpus_requested << "," << name << ","
		    << fmt(w->trace_runtime_s[j.id - 1]) << "\n";
		map.flush();
		if (++k == w->jobs.size() || (isatty(STDERR_FILENO) && k % 10 == 0))
			std::fprintf(stderr, "\rdlsched-replay: submitted %zu/%zu", k, w->jobs.size());
	}
	std::fprintf(stderr, "\n");
	if (!wait)
		return 0;
	// Wait until none of our jobs is in the queue any more. Progress: a line that rewrites itself on
	// a terminal, otherwise one line every 30 s.
	const bool tty = isatty(STDERR_FILENO);
	auto last_line = std::chrono::steady_clock::now() - std::chrono::seconds(60);
	int squeue_failures = 0;
	while (true) {
		std::string out;
		if (run({"squeue", "-h", "-o", "%i"}, out) != 0) {
			if (++squeue_failures > 60) {
				std::fprintf(stderr, "dlsched-replay: squeue failed for 120 s; is the cluster up?\n");
				return 1;
			}
			std::this_thread::sleep_for(std::chrono::seconds(2));
			continue;
		}
		squeue_failures = 0;
		std::size_t left = 0, pos = 0;
		while (pos < out.size()) {
			std::size_t nl = out.find('\n', pos);
			std::string id = out.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
			left += ids.count(id);
			pos = nl == std::string::npos ? out.size() : nl + 1;
		}
		if (tty) {
			std::fprintf(stderr, "\rdlsched-replay: %zu of %zu jobs still queued or running   ", left, ids.size());
		} else if (std::chrono::steady_clock::now() - last_line > std::chrono::seconds(30) || left == 0) {
			std::fprintf(stderr, "dlsched-replay: %zu of %zu jobs still queued or running\n", left, ids.size());
			last_line = std::chrono::steady_clock::now();
		}
		if (left == 0)
			break;
		std::this_thread::sleep_for(std::chrono::seconds(2));
	}
	const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::fprintf(stderr, "%sdlsched-replay: %zu jobs done in %.0f s; map in %s/jobs.csv\n", tty ? "\n" : "", ids.size(), wall,
	             out_dir.c_str());
	return 0;
}
