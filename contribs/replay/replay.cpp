// dlsched-replay: submits a workload (dlsched-sim's formats) to the running Slurm cluster at the
// trace's arrival times divided by --speedup; each job runs dlsched-emu-train for its epochs. Waits
// until every job has left the queue and writes the trace-to-Slurm job id map.
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits.h>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <cerrno>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "util/command.h"
#include "util/flag_table.h"
#include "util/stopping_journal.h"
#include "workload/inference_demand.h"
#include "workload/workload.h"

using namespace dlsched;

namespace {

const char kUsage[] =
	"usage: dlsched-replay --workload FILE [--speedup X] [--format auto|philly|pollux|dlsched]\n"
	"                      [--max-jobs N] [--seed N] [--gpus-per-node G] [--partition P]\n"
	"                      [--out DIR] [--emu-train PATH] [--priority-fraction F] [--no-wait]\n"
	"                      [--deadline-fraction F] [--deadline-slack S|LO:HI] [--deadline-elastic]\n"
	"                      [--elastic-fraction F] [--inference-demand FILE [--demand-file PATH]]\n"
	"Submits every job with sbatch at its arrival time / X; needs SLURM_CONF (e.g. . DIR/env.sh of\n"
	"dlsched-cluster). Writes DIR/jobs.csv (trace job, Slurm job id) and the jobs' output in DIR.\n"
	"Waits until every job is done: ended, and not in sched/dlsched's stopping table\n"
	"(StateSaveLocation/dlsched-stopping.state, from scontrol; reading it needs root or SlurmUser):\n"
	"a job that exits on dlsched's checkpoint request is requeued when its report arrives, at the\n"
	"latest after PreemptGrace=.\n"
	"--priority-fraction F: a seeded fraction F of the jobs without a QoS are submitted with "
	"--qos=high,\n"
	"the same jobs as dlsched-sim --priority-fraction F marks (the QoS must exist: dlsched-cluster makes "
	"it).\n"
	"--deadline-fraction F, --deadline-slack S|LO:HI, --deadline-elastic, --elastic-fraction F: as\n"
	"dlsched-sim's (the same seeded jobs). Deadline jobs get QoS deadline and their deadline as the\n"
	"comment word deadline=<epoch s> (and in the admin comment, for sacct): at compressed time their\n"
	"deadlines are seconds away, which Slurm's --deadline (minute-granular time limits) cannot express.\n"
	"Elastic jobs get --dl-elastic=MIN:MAX (or the comment words gpus_min= gpus_max=).\n"
	"--inference-demand FILE: the inference demand series (time_s,demand, as dlsched-sim's) from the\n"
	"workload's start at the same speed-up, written as it changes to the demand file sched/dlsched\n"
	"reads (--demand-file PATH; default: StateSaveLocation/dlsched-inference-demand, from scontrol;\n"
	"InferenceDemandFile= in dlsched.conf must agree). Writing it needs root or SlurmUser.\n";

// A Slurm command that has not answered in this long is killed and counts as failed (slurmctld
// itself retries for MessageTimeout, 10 s by default, before a command gives up).
constexpr double kCommandLimitS = 120;

// Runs argv (util/command.h), returns its exit status (-1: it did not start or was killed at the
// limit) and standard output.
int run(const std::vector<std::string>& args, std::string& out)
{
	const CommandResult r = run_command(args, kCommandLimitS, 64 << 20);
	out = r.out;
	if (!r.started)
		std::fprintf(stderr, "dlsched-replay: cannot run %s\n", r.error.c_str());
	else if (r.timed_out)
		std::fprintf(stderr, "dlsched-replay: %s did not finish within %.0f s; killed\n",
			     args[0].c_str(), kCommandLimitS);
	return r.ok() || (r.started && !r.timed_out) ? r.status : -1;
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

// The non-empty lines of a command's output.
std::vector<std::string> lines(const std::string& out)
{
	std::vector<std::string> v;
	for (std::size_t p = 0; p < out.size();) {
		std::size_t nl = out.find('\n', p);
		std::size_t eol = nl == std::string::npos ? out.size() : nl;
		if (eol > p)
			v.push_back(out.substr(p, eol - p));
		p = eol + 1;
	}
	return v;
}

// The cluster's StateSaveLocation, from scontrol show config ("" when it cannot be found).
std::string state_save_location()
{
	std::string conf;
	if (run({"scontrol", "show", "config"}, conf) != 0)
		return "";
	for (const std::string& line : lines(conf))
		if (line.rfind("StateSaveLocation", 0) == 0 && line.find('=') != std::string::npos) {
			std::string dir = line.substr(line.find('=') + 1);
			dir.erase(0, dir.find_first_not_of(' '));
			dir.erase(dir.find_last_not_of(" \r") + 1);
			return dir;
		}
	return "";
}

}  // namespace

int main(int argc, char** argv)
{
	std::string workload, format = "auto", out_dir = "replay-out", partition,
			      emu = self_dir() + "/dlsched-emu-train";
	std::string demand_series, demand_file;
	double speedup = 1;
	long per_node = 8;
	bool wait = true;
	ReadOptions read;
	BuildOptions build;
	bool no_wait = false;
	long long max_jobs = 0, seed = static_cast<long long>(build.seed);
	int gpus_per_node = 8;
	// The flags; --help lists them after kUsage.
	FlagTable flags({
		string_flag("--workload", "FILE", "the trace", &workload),
		string_flag("--format", "auto|philly|pollux|dlsched", "its format (default auto)", &format),
		number_flag("--speedup", "X", "replay X times faster", &speedup, 1e-9),
		integer_flag("--max-jobs", "N", "the first N jobs (0: all)", &max_jobs, 0),
		integer_flag("--seed", "N", "seed of the workload's draws", &seed, 0),
		int_flag("--gpus-per-node", "G", "GPUs of each node", &gpus_per_node, 1, 1 << 20),
		number_flag("--priority-fraction", "F", "jobs of QoS high", &build.priority_fraction, 0, 1),
		number_flag("--deadline-fraction", "F", "jobs with a deadline", &build.deadline_fraction, 0,
			    1),
		number_flag("--elastic-fraction", "F", "elastic jobs", &build.elastic_fraction, 0, 1),
		value_flag("--deadline-slack", "S|LO:HI", "deadline slack (as dlsched-sim's)",
			   [&build](const std::string& v) { return parse_deadline_slack(v, build); }),
		switch_flag("--deadline-elastic", "deadline jobs may grow", &build.deadline_elastic),
		string_flag("--partition", "P", "the partition", &partition),
		string_flag("--inference-demand", "FILE", "an inference demand series", &demand_series),
		string_flag("--demand-file", "PATH", "where the demand is written", &demand_file),
		string_flag("--out", "DIR", "the output directory", &out_dir),
		string_flag("--emu-train", "PATH", "dlsched-emu-train", &emu),
		switch_flag("--no-wait", "submit and exit", &no_wait),
	});
	if (Status st = flags.parse(argc, argv); !st.is_ok()) {
		std::fprintf(stderr, "dlsched-replay: %s\n%s", st.message().c_str(), kUsage);
		return 2;
	}
	if (flags.help_asked()) {
		std::printf("%s\noptions:\n%s", kUsage, flags.options_help().c_str());
		return 0;
	}
	wait = !no_wait;
	build.max_jobs = static_cast<std::size_t>(max_jobs);
	build.seed = static_cast<std::uint64_t>(seed);
	per_node = gpus_per_node;
	if (workload.empty() || speedup <= 0 || per_node <= 0) {
		std::fprintf(stderr,
			     "dlsched-replay: --workload is required; --speedup and --gpus-per-node must be "
			     "positive\n%s",
			     kUsage);
		return 2;
	}
	InferenceDemand demand;
	if (!demand_series.empty()) {
		auto d = InferenceDemand::load(demand_series);
		if (!d.is_ok()) {
			std::fprintf(stderr, "dlsched-replay: %s\n", d.status().message().c_str());
			return 2;
		}
		demand = std::move(d.value());
		if (demand_file.empty()) {
			const std::string dir = state_save_location();
			if (!dir.empty())
				demand_file = dir + "/dlsched-inference-demand";
			if (demand_file.empty()) {
				std::fprintf(stderr,
					     "dlsched-replay: cannot find StateSaveLocation with scontrol: "
					     "give --demand-file PATH\n");
				return 1;
			}
		}
	} else if (!demand_file.empty()) {
		std::fprintf(stderr, "dlsched-replay: --demand-file needs --inference-demand FILE\n%s",
			     kUsage);
		return 2;
	}
	if (!std::getenv("SLURM_CONF"))
		std::fprintf(stderr,
			     "dlsched-replay: note: SLURM_CONF is not set; using the system's Slurm\n");
	if (access(emu.c_str(), X_OK) != 0) {
		std::fprintf(stderr, "dlsched-replay: %s is not executable (give --emu-train PATH)\n",
			     emu.c_str());
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
	// The emulated jobs' training data: a file they read at their model's data rate, so that the
	// profiling collector measures real storage traffic. Deterministic bytes (not zeros, which a
	// file system may store sparsely).
	const std::string data_path = out_dir + "/dataset.bin";
	{
		std::ofstream data(data_path, std::ios::binary | std::ios::trunc);
		std::uint64_t x = 0x9e3779b97f4a7c15ULL;
		std::vector<std::uint64_t> block(8192);
		for (int b = 0; b < 256 && data; ++b) {  // 16 MiB
			for (auto& word : block) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				word = x;
			}
			data.write(reinterpret_cast<const char*>(block.data()),
				   static_cast<std::streamsize>(block.size() * sizeof block[0]));
		}
		if (!data) {
			std::fprintf(stderr, "dlsched-replay: cannot write %s\n", data_path.c_str());
			return 1;
		}
	}
	// With spank/dlsched loaded, sbatch takes --dl-model and --dl-epochs: the profiling collector
	// records the job under its model.
	std::string help;
	run({"sbatch", "--help"}, help);
	const bool dl_options = help.find("--dl-model") != std::string::npos;
	// One entry per trace job: the Slurm job that runs it now, and the ones slurmctld lost before.
	struct Entry {
		const Job* job;
		std::string name;  // model name
		std::string id;    // current Slurm job id
		std::vector<std::string>
			lost;  // earlier ids that slurmctld forgot (killed before it saved them)
		long deadline_epoch = 0;
		bool done = false;
		bool missing = false;
		std::chrono::steady_clock::time_point missing_since;
		bool ended = false;  // seen in a final state; done once it stays there kEndGrace
		std::chrono::steady_clock::time_point ended_since;
	};
	std::vector<Entry> entries;
	entries.reserve(w->jobs.size());
	const std::string map_path = out_dir + "/jobs.csv";
	const char kMapHeader[] = "trace_job,slurm_job,submit_s,gpus,model,runtime_s,lost_jobs\n";
	auto map_row = [&](std::ostream& map, const Entry& e) {
		std::string lost;
		for (const std::string& l : e.lost)
			lost += (lost.empty() ? "" : ";") + l;
		map << e.job->id << "," << e.id << "," << fmt(e.job->submit_time) << ","
		    << e.job->gpus_requested << "," << e.name << "," << fmt(w->trace_runtime_s[e.job->id - 1])
		    << "," << lost << "\n";
	};
	// A row is appended per submission; the map is rewritten whole (through a temporary file) only
	// when a resubmission changes an id.
	std::ofstream map(map_path);
	map << kMapHeader;
	auto rewrite_map = [&]() {
		const std::string tmp = map_path + ".tmp";
		{
			std::ofstream out(tmp);
			out << kMapHeader;
			for (const Entry& e : entries)
				map_row(out, e);
		}
		map.close();
		std::rename(tmp.c_str(), map_path.c_str());
		map.open(map_path, std::ios::app);
	};
	auto submit = [&](Entry& e) -> bool {
		const Job& j = *e.job;
		const long nodes = (j.gpus_requested + per_node - 1) / per_node;
		const long gpn = nodes > 1 ? per_node : j.gpus_requested;
		const long minutes =
			std::max(1L, static_cast<long>(std::ceil(j.time_limit / speedup / 60.0)));
		const std::string ckpt = ckpt_dir + "/" + std::to_string(j.id);
		std::string wrap = "exec " + emu + " --model " + e.name + " --epochs " + fmt(j.epochs_total) +
				   " --epoch-time-1gpu " + fmt(j.epoch_time_1gpu) + " --speedup " +
				   fmt(speedup) + " --checkpoint " + ckpt + " --data " + data_path;
		// What the dlsched plugins read (plugins/README.md): the model and its epochs, with the epoch
		// time in the replay's compressed seconds.
		std::string comment = "model=" + e.name + " epochs=" + fmt(j.epochs_total) +
				      " epoch_time_1gpu=" + fmt(j.epoch_time_1gpu / speedup);
		if (j.has_deadline()) {
			// A resubmitted job keeps its first submission's deadline. Not Slurm's --deadline: at
			// compressed time it is seconds away, and Slurm cancels a job whose time limit (at
			// least a minute) ends after its deadline. The dlsched plugins read the comment word.
			const long now = static_cast<long>(std::time(nullptr));
			if (e.deadline_epoch == 0)
				e.deadline_epoch =
					now + std::max(1L, static_cast<long>(std::ceil(
								   (j.deadline - j.submit_time) / speedup)));
			comment += " deadline=" + std::to_string(e.deadline_epoch);
		}
		if (j.elastic() && !dl_options)
			comment += " gpus_min=" + std::to_string(j.gpus_min) +
				   " gpus_max=" + std::to_string(j.gpus_max);
		std::vector<std::string> args = {"sbatch",
						 "--parsable",
						 "--requeue",
						 "-J",
						 "dl-" + std::to_string(j.id),
						 "-N",
						 std::to_string(nodes),
						 "--gres=gpu:" + std::to_string(gpn),
						 "--time=" + std::to_string(minutes),
						 "-o",
						 out_dir + "/%j.out",
						 "--open-mode=append",
						 "--comment",
						 comment,
						 "--wrap",
						 wrap};
		if (!partition.empty())
			args.insert(args.begin() + 1, "--partition=" + partition);
		if (!j.qos.empty())
			args.insert(args.begin() + 1, "--qos=" + j.qos);
		if (dl_options) {
			args.insert(args.begin() + 1, "--dl-model=" + e.name);
			args.insert(args.begin() + 1, "--dl-epochs=" + fmt(j.epochs_total));
			if (j.elastic())
				args.insert(args.begin() + 1, "--dl-elastic=" + std::to_string(j.gpus_min) +
								      ":" + std::to_string(j.gpus_max));
		}
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
				std::fprintf(stderr,
					     "\ndlsched-replay: sbatch failed for trace job %u (exit %d); "
					     "retrying\n",
					     j.id, rc);
			std::this_thread::sleep_for(std::chrono::seconds(2));
		}
		if (rc != 0 || out.empty()) {
			std::fprintf(stderr,
				     "dlsched-replay: sbatch failed for trace job %u (exit %d) for 120 s; is "
				     "the cluster up?\n",
				     j.id, rc);
			return false;
		}
		e.id = out.substr(0, out.find(';'));
		if (e.deadline_epoch > 0) {
			// sacct has no deadline field: record it in the admin comment (the dlsched plugins do
			// the same for any job; this covers stock Slurm).
			std::string ignored;
			run({"scontrol", "update", "JobId=" + e.id,
			     "AdminComment=deadline=" + std::to_string(e.deadline_epoch)},
			    ignored);
		}
		return true;
	};

	// Watching the jobs. A job is done once Slurm shows it in a final state. A job that is in
	// neither squeue (which keeps ended jobs for MinJobAge) nor, as ended, in sacct for
	// kMissingGrace was lost by slurmctld: a controller killed (SIGKILL, a crash) forgets the jobs
	// submitted since its last state save, a few seconds' worth, and kills them on the nodes. The
	// replay submits such a job again, so that every trace job runs to its end; it resumes from its
	// checkpoint. The lost id's accounting record stays behind as a runaway job
	// (sacctmgr show runawayjobs); jobs.csv lists it in lost_jobs. The restarted slurmctld gives
	// the lost ids to new jobs again, so jobs are matched by id and name (dl-<trace job>).
	const auto kMissingGrace = std::chrono::seconds(15);
	// A job that ends on dlsched's checkpoint request (two-step preemption, a resize) shows a final
	// state until sched/dlsched requeues it at its next cycle: final only once it stays so this long.
	const auto kEndGrace = std::chrono::seconds(5);
	// A job in sched/dlsched's stopping table (StateSaveLocation/dlsched-stopping.state) is not done
	// whatever its state: sched/dlsched requeues it when its checkpoint report arrives, at the latest
	// when its PreemptGrace= runs out (the table's deadline), which can be minutes after the job
	// exited. The table rather than a guess from PreemptGrace=: it says for each job whether the
	// plugin still means to requeue it, and when at the latest; a timer would count a job that was
	// never asked to stop as stopping, and one still stopping past a guessed grace as done. Past its
	// deadline (a cycle's worth, kStopLate, later), the table no longer holds a job back: a
	// sched/dlsched that stopped running must not keep the replay waiting for ever.
	const double kStopLate = 30;
	std::string journal;
	if (wait) {
		const std::string dir = state_save_location();
		if (dir.empty())
			std::fprintf(
				stderr,
				"dlsched-replay: note: no StateSaveLocation from scontrol show config; jobs "
				"sched/dlsched is stopping are done once they stay ended %lld s\n",
				static_cast<long long>(kEndGrace.count()));
		else
			journal = dir + "/" + kStoppingJournalName;
	}
	bool journal_warned = false;
	std::set<std::string> stop_noted;  // jobs already reported as held by the stopping table
	static const std::set<std::string> kActive = {
		"PENDING",   "RUNNING",      "SUSPENDED",    "COMPLETING",   "CONFIGURING",
		"REQUEUED",  "REQUEUE_HOLD", "REQUEUE_FED",  "RESIZING",     "SIGNALING",
		"STAGE_OUT", "STOPPED",      "SPECIAL_EXIT", "RESV_DEL_HOLD"};
	int squeue_failures = 0;
	std::size_t resubmitted = 0;
	// Returns false when the cluster stopped answering, or a resubmission failed.
	auto poll = [&]() -> bool {
		std::string out;
		// Id, name and state: a restarted slurmctld hands out the ids of the jobs it lost again, so
		// a job is ours only if its name (dl-<trace job>) matches too.
		if (run({"squeue", "-h", "-t", "all", "-o", "%i %j %T|%r"}, out) != 0) {
			if (++squeue_failures > 60) {
				std::fprintf(stderr,
					     "dlsched-replay: squeue failed for 120 s; is the cluster up?\n");
				return false;
			}
			return true;
		}
		squeue_failures = 0;
		std::map<std::string, std::string> state;  // "id name" -> state
		for (std::string line : lines(out)) {
			const std::size_t bar = line.find('|');
			const std::string reason = bar == std::string::npos ? "" : line.substr(bar + 1);
			if (bar != std::string::npos)
				line.resize(bar);
			const std::size_t sp = line.rfind(' ');
			if (sp == std::string::npos)
				continue;
			state[line.substr(0, sp)] = line.substr(sp + 1);
			// After a slurmctld crash a restarted one may reuse a lost job's id while slurmd
			// still runs the old copy: the new launch fails and Slurm holds the job. Release it
			// (as an admin would), so that every job runs.
			if (line.substr(sp + 1) == "PENDING" &&
			    reason.find("launch failed requeued held") != std::string::npos) {
				const std::string id = line.substr(0, line.find(' '));
				std::string ignored;
				if (run({"scontrol", "release", id}, ignored) == 0)
					std::fprintf(stderr,
						     "dlsched-replay: released job %s, held by Slurm after a "
						     "failed launch\n",
						     id.c_str());
			}
		}
		const auto now = std::chrono::steady_clock::now();
		// The jobs sched/dlsched will still requeue (read after squeue: a job it requeued since
		// is pending in squeue, or still in the table).
		std::map<std::uint32_t, StoppingJob> stopping;
		if (!journal.empty()) {
			auto t = read_stopping_journal(journal);
			if (t.is_ok()) {
				stopping = std::move(t.value());
			} else if (!journal_warned) {
				std::fprintf(
					stderr,
					"\ndlsched-replay: %s; jobs sched/dlsched is stopping may be counted "
					"done too early (run as root or SlurmUser)\n",
					t.status().message().c_str());
				journal_warned = true;
			}
		}
		const double wall = static_cast<double>(std::time(nullptr));
		auto being_stopped = [&](const Entry& e) {
			auto st = stopping.find(
				static_cast<std::uint32_t>(std::strtoul(e.id.c_str(), nullptr, 10)));
			if (st == stopping.end())
				return false;
			if (wall > st->second.deadline + kStopLate) {
				if (stop_noted.insert(e.id + " late").second)
					std::fprintf(stderr,
						     "\ndlsched-replay: job %s is still in sched/dlsched's "
						     "stopping table %.0f s after its grace ended; no longer "
						     "waiting for its requeue\n",
						     e.id.c_str(), wall - st->second.deadline);
				return false;
			}
			if (stop_noted.insert(e.id).second)
				std::fprintf(
					stderr,
					"\ndlsched-replay: job %s was asked to checkpoint by sched/dlsched; "
					"not done until it is requeued (at the latest in %.0f s)\n",
					e.id.c_str(), std::max(0.0, st->second.deadline - wall));
			return true;
		};
		bool changed = false;
		for (Entry& e : entries) {
			if (e.done)
				continue;
			const std::string name = "dl-" + std::to_string(e.job->id);
			auto it = state.find(e.id + " " + name);
			if (it != state.end()) {
				e.missing = false;
				if (kActive.count(it->second) || being_stopped(e)) {
					e.ended = false;
				} else if (!e.ended) {
					e.ended = true;
					e.ended_since = now;
				} else if (now - e.ended_since >= kEndGrace) {
					e.done = true;
				}
				continue;
			}
			if (being_stopped(e)) {  // ended and gone from squeue (MinJobAge), requeued soon
				e.missing = false;
				continue;
			}
			if (!e.missing) {
				e.missing = true;
				e.missing_since = now;
				continue;
			}
			if (now - e.missing_since < kMissingGrace)
				continue;
			// Not in squeue for kMissingGrace: ended long ago (sacct says so), or lost.
			std::string acct;
			std::string final_state;
			if (run({"sacct", "-n", "-X", "-P", "--duplicates", "-o", "JobName,State", "-j",
				 e.id},
				acct) != 0)
				continue;  // accounting not answering: look again later
			// The state of this job's last record (first word: "CANCELLED by 0"); records of
			// another job that got the same id after a restart have another name.
			for (const std::string& line : lines(acct)) {
				const std::size_t bar = line.find('|');
				if (bar != std::string::npos && line.compare(0, bar, name) == 0) {
					const std::string st = line.substr(bar + 1);
					final_state = st.substr(0, st.find(' '));
				}
			}
			if (!final_state.empty() && kActive.count(final_state) == 0) {
				e.done = true;
				continue;
			}
			const std::string old = e.id;
			std::fprintf(stderr,
				     "\ndlsched-replay: slurmctld lost job %s (trace job %u; accounting says "
				     "'%s'); submitting it again\n",
				     old.c_str(), e.job->id,
				     final_state.empty() ? "nothing" : final_state.c_str());
			if (!submit(e))
				return false;
			e.lost.push_back(old);
			e.missing = false;
			++resubmitted;
			changed = true;
		}
		if (changed)
			rewrite_map();
		return true;
	};

	const bool tty = isatty(STDERR_FILENO);
	const auto t0 = std::chrono::steady_clock::now();
	const auto kPoll = std::chrono::seconds(2);
	auto next_poll = t0;
	auto last_line = t0 - std::chrono::seconds(60);
	std::size_t next = 0;
	// The demand series from the workload's first submission, at the replay's speed.
	const double origin = w->jobs.empty() ? 0.0 : w->jobs.front().submit_time;
	double demand_written = -1;
	std::size_t demand_changes = 0;
	auto write_demand = [&](double sim_t) -> bool {
		const double d = demand.at(sim_t - origin);
		if (d == demand_written)
			return true;
		const std::string tmp = demand_file + ".tmp";
		FILE* f = std::fopen(tmp.c_str(), "w");
		if (!f || std::fprintf(f, "%.4f\n", d) < 0 || std::fclose(f) != 0 ||
		    chmod(tmp.c_str(), 0644) != 0 || std::rename(tmp.c_str(), demand_file.c_str()) != 0) {
			std::fprintf(stderr,
				     "dlsched-replay: cannot write the inference demand to %s: %s (root or "
				     "SlurmUser "
				     "must write it)\n",
				     demand_file.c_str(), std::strerror(errno));
			return false;
		}
		demand_written = d;
		++demand_changes;
		return true;
	};
	while (true) {
		auto now = std::chrono::steady_clock::now();
		if (!demand.empty()) {
			const double sim_t =
				origin + std::chrono::duration<double>(now - t0).count() * speedup;
			if (!write_demand(sim_t))
				return 1;
			const double change = demand.next_change(sim_t - origin) + origin;
			if (std::isfinite(change)) {
				const auto at =
					t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
						     std::chrono::duration<double>(
							     (change - origin) / speedup + 0.01));
				next_poll = std::min(next_poll, at);
			}
		}
		if (next < w->jobs.size()) {
			const Job& j = w->jobs[next];
			const auto due = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
						      std::chrono::duration<double>(j.submit_time / speedup));
			if (now >= due) {
				entries.push_back(Entry{&j,
							models->at(j.model).name,
							"",
							{},
							0,
							false,
							false,
							{},
							false,
							{}});
				if (!submit(entries.back()))
					return 1;
				map_row(map, entries.back());
				map.flush();
				++next;
				if (next == w->jobs.size() || (tty && next % 10 == 0))
					std::fprintf(stderr, "\rdlsched-replay: submitted %zu/%zu", next,
						     w->jobs.size());
				if (next == w->jobs.size())
					std::fprintf(stderr, "\n");
				continue;
			}
			if (!wait || now < next_poll) {
				std::this_thread::sleep_until(wait ? std::min(due, next_poll) : due);
				continue;
			}
		} else if (!wait) {
			break;
		} else if (now < next_poll) {
			std::this_thread::sleep_until(next_poll);
			continue;
		}
		// Poll (only when waiting for the jobs).
		next_poll = now + kPoll;
		if (!poll())
			return 1;
		if (next < w->jobs.size())
			continue;
		std::size_t left = 0;
		for (const Entry& e : entries)
			left += !e.done;
		if (tty) {
			std::fprintf(stderr, "\rdlsched-replay: %zu of %zu jobs still queued or running   ",
				     left, entries.size());
		} else if (now - last_line > std::chrono::seconds(30) || left == 0) {
			std::fprintf(stderr, "dlsched-replay: %zu of %zu jobs still queued or running\n",
				     left, entries.size());
			last_line = now;
		}
		if (left == 0)
			break;
	}
	if (!wait)
		return 0;
	const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::fprintf(stderr, "%sdlsched-replay: %zu jobs done in %.0f s; map in %s", tty ? "\n" : "",
		     entries.size(), wall, map_path.c_str());
	if (resubmitted > 0)
		std::fprintf(stderr,
			     "; %zu lost by slurmctld and submitted again (lost_jobs column; their "
			     "accounting records are "
			     "runaway jobs: sacctmgr show runawayjobs)",
			     resubmitted);
	if (!demand.empty())
		std::fprintf(stderr, "; inference demand written %zu times to %s", demand_changes,
			     demand_file.c_str());
	std::fprintf(stderr, "\n");
	return 0;
}
