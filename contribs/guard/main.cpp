// dlsched-guard(1): the learned policy's guard for Slurm (doc/admin-guide.md "The learned policy's
// guard"). Outside slurmctld, every GuardInterval= (a systemd timer, or --loop): reads the jobs of
// the last GuardWindow= from accounting (sacct: finished, running and pending), builds the snapshot
// the controller knew (guard_snapshot), replays it through dlsched-sim's engine once with the learned
// policy and once with GuardPolicy=, applies the switching rule (GuardState, kept in a state file
// across runs) and writes the verdict file sched/dlsched follows (temporary file, fsync, rename).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "contribs/guard/known.h"
#include "contribs/sim/cluster_spec.h"
#include "contribs/sim/engine.h"
#include "contribs/train/sacct.h"
#include "models/learned.h"
#include "policy/guard.h"
#include "policy/guard_verdict.h"
#include "policy/registry.h"
#include "policy/scheduler.h"
#include "util/slurm_conf.h"
#include "util/trusted_file.h"
#include "workload/workload.h"

using namespace dlsched;

namespace {

const char* const kUsage =
	"usage: dlsched-guard --config dlsched.conf --cluster SPEC [--sacct FILE] [--verdict FILE]\n"
	"                     [--state FILE] [--now SECONDS] [--loop] [--cluster-name NAME]\n"
	"                     [--snapshot FILE]\n"
	"One shadow evaluation of the learned policy against GuardPolicy= on the jobs of the last\n"
	"GuardWindow= (sacct), then the verdict file sched/dlsched follows. See dlsched-guard(1).\n";

struct Options {
	std::string config, cluster, sacct, verdict, state, cluster_name, snapshot;
	double now = -1;
	bool loop = false;
};

int fail(const std::string& m)
{
	std::fprintf(stderr, "dlsched-guard: %s\n", m.c_str());
	return 1;
}

// The state kept across runs: who schedules now, and the counts.
struct GuardFileState {
	GuardChoice choice = GuardChoice::kHeuristic;
	long switches = 0, evaluations = 0;
	double at = 0;
};

Result<GuardFileState> read_state(const std::string& path)
{
	GuardFileState s;
	std::ifstream in(path);
	if (!in)
		return s;  // none yet: the first evaluation, from the heuristic
	std::string line;
	int n = 0;
	while (std::getline(in, line)) {
		++n;
		if (line.empty() || line[0] == '#')
			continue;
		const auto eq = line.find('=');
		const std::string key = line.substr(0, eq == std::string::npos ? 0 : eq);
		const std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
		char* end = nullptr;
		const double v = std::strtod(value.c_str(), &end);
		const bool number =
			!value.empty() && end && *end == '\0' && std::isfinite(v) && v >= 0 && v <= 1e15;
		if (key == "choice" && (value == "learned" || value == "heuristic"))
			s.choice = value == "learned" ? GuardChoice::kLearned : GuardChoice::kHeuristic;
		else if (key == "switches" && number)
			s.switches = static_cast<long>(v);
		else if (key == "evaluations" && number)
			s.evaluations = static_cast<long>(v);
		else if (key == "at" && number)
			s.at = v;
		else
			return parse_error(path + ":" + std::to_string(n) + ": '" + line.substr(0, 60) +
					   "' is not a state line of dlsched-guard (choice=, switches=, "
					   "evaluations=, at=); remove the file to start from GuardPolicy=");
	}
	return s;
}

// `text` into `path` as a whole or not at all: a temporary file beside it, fsync, rename, and the
// directory synced. Mode 0644: sched/dlsched refuses a file others may write.
Status write_atomically(const std::string& path, const std::string& text)
{
	std::string tmp = path + ".XXXXXX";
	std::vector<char> name(tmp.begin(), tmp.end());
	name.push_back('\0');
	const int fd = mkstemp(name.data());
	if (fd < 0)
		return io_error(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
	bool ok = fchmod(fd, 0644) == 0;
	std::size_t done = 0;
	while (ok && done < text.size()) {
		const ssize_t w = write(fd, text.data() + done, text.size() - done);
		if (w < 0 && errno == EINTR)
			continue;
		ok = w > 0;
		done += w > 0 ? static_cast<std::size_t>(w) : 0;
	}
	const int saved = errno;
	ok = ok && fsync(fd) == 0;
	ok = (close(fd) == 0) && ok;
	if (!ok || rename(name.data(), path.c_str()) != 0) {
		const std::string why = std::strerror(errno ? errno : saved);
		unlink(name.data());
		return io_error(path + ": cannot write it: " + why);
	}
	const std::string dir =
		path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
	const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return Status::ok();
}

// sacct -P output: from --sacct, or sacct itself for the window's jobs.
Result<std::string> read_history(const Options& o, double now, double window)
{
	std::string text;
	if (!o.sacct.empty()) {
		std::ifstream in(o.sacct, std::ios::binary);
		if (!in)
			return not_found(o.sacct +
					 ": cannot read it (--sacct: output of sacct -X -P -a -o "
					 "JobID,Submit,Start,End,AllocTRES,ReqTRES,Comment,User,Timelimit)");
		std::ostringstream s;
		s << in.rdbuf();
		return s.str();
	}
	char from[32], to[32];
	const std::time_t f = static_cast<std::time_t>(now - window), t = static_cast<std::time_t>(now);
	std::tm tf{}, tt{};
	gmtime_r(&f, &tf);
	gmtime_r(&t, &tt);
	std::strftime(from, sizeof(from), "%Y-%m-%dT%H:%M:%S", &tf);
	std::strftime(to, sizeof(to), "%Y-%m-%dT%H:%M:%S", &tt);
	// sacct reads and prints local time; TZ=UTC makes it the UTC the reader assumes. With -S and
	// -E and no state, sacct lists every job pending or running at some time in the window: the
	// backlog at its start as well as the jobs submitted in it.
	const std::string cmd = std::string("TZ=UTC sacct -X -P -a -S ") + from + " -E " + to +
				" -o JobID,Submit,Start,End,AllocTRES,ReqTRES,Comment,User,Timelimit";
	FILE* p = popen(cmd.c_str(), "r");
	if (!p)
		return io_error("cannot run sacct: " + std::string(std::strerror(errno)));
	char buf[65536];
	std::size_t n;
	while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0)
		text.append(buf, n);
	const int rc = pclose(p);
	if (rc != 0)
		return io_error("'" + cmd + "' failed (" +
				(WIFEXITED(rc) ? "exit status " + std::to_string(WEXITSTATUS(rc))
					       : "status " + std::to_string(rc)) +
				"): is slurmdbd reachable from this host?");
	return text;
}

struct Guard {
	Config config;
	ModelCatalog models;
	PolicyRegistry registry;
	std::unique_ptr<Scheduler> learned, heuristic;
	GuardSettings settings;
	std::vector<Node> nodes;
	sim::SimOptions so;
	guard::KnownOptions known;  // how the controller's view estimated the jobs
};

Status set_up(const Options& o, Guard& g)
{
	auto c = Config::load_file(o.config);
	if (!c.is_ok())
		return c.status();
	g.config = c.value();
	auto models = load_model_catalog(g.config.get_string("ModelProfiles"));
	if (!models.is_ok())
		return models.status();
	g.models = std::move(models).value();
	register_builtin_policies(g.registry);
	auto learned = Scheduler::create(g.config, g.registry);
	if (!learned.is_ok())
		return learned.status();
	g.learned = std::move(learned).value();
	const bool is_learned = g.learned->spec().ordering == std::string(kLearnedPolicy) ||
				g.learned->spec().allocation == std::string(kLearnedPolicy);
	auto settings = GuardSettings::from_config(g.config, is_learned);
	if (!settings.is_ok())
		return settings.status();
	g.settings = settings.value();
	if (!g.settings.enabled)
		return invalid_argument(
			o.config + ": " +
			(is_learned ? std::string("LearnedGuard=no")
				    : "Policy= is not a learned policy (dl2, dual-agent)") +
			": there is nothing to guard; stop dlsched-guard or set LearnedGuard=yes");
	if (!g.learned->fallback().empty())
		return invalid_argument(o.config + ": the learned policy cannot be built as configured (" +
					g.learned->notes() + "): no verdict is written");
	auto gc = guard_policy_config(g.config, g.settings);
	if (!gc.is_ok())
		return gc.status();
	auto heuristic = Scheduler::create(*gc, g.registry);
	if (!heuristic.is_ok())
		return invalid_argument("GuardPolicy=" + g.settings.policy + ": " +
					heuristic.status().message());
	g.heuristic = std::move(heuristic).value();
	auto nodes = sim::parse_cluster_spec(o.cluster);
	if (!nodes.is_ok())
		return nodes.status();
	g.nodes = std::move(nodes).value();
	// The replays as dlsched-sim's guard runs them: what the controller believes is the truth.
	sim::SimOptions& so = g.so;
	so.sched_interval = g.config.get_double("SchedInterval");
	so.sched_on_events = g.config.get_bool("SchedOnEvents");
	so.restart_model = g.config.get_word("RestartCost") == "model";
	so.restart_cost = so.restart_model ? 0 : g.config.get_double("RestartCost");
	so.overhead = predict::OverheadParams::from_config(g.config);
	so.preempt_grace = g.config.get_double("PreemptGrace");
	so.seed = static_cast<std::uint64_t>(g.config.get_int("Seed"));
	so.reclaim_timeout = g.config.get_double("ReclaimTimeout");
	so.hint_limits.floor_no_limit_s = g.config.get_double("HintFloorNoTimeLimit");
	so.estimates = sim::Estimates::kOracle;
	so.drop_unrunnable = true;
	// The jobs' lengths as sched/dlsched's view had them (the same evidence, the same bounds).
	guard::KnownOptions& k = g.known;
	k.window = g.settings.window;
	k.profile_db = g.config.get_string("ProfileDB");
	k.cluster = !o.cluster_name.empty() ? o.cluster_name : slurm_conf_value("ClusterName");
	k.limits.trust_factor = g.config.get_double("HintTrustFactor");
	k.limits.floor_no_limit_s = g.config.get_double("HintFloorNoTimeLimit");
	if (!g.nodes.empty() && g.nodes[0].gpus_total > 0)
		k.limits.gpus_per_node = g.nodes[0].gpus_total;
	k.overhead = so.overhead;
	return Status::ok();
}

double mean_jct(const Guard& g, const Workload& w, const Scheduler& s)
{
	if (w.jobs.empty())
		return 0;
	auto r = sim::simulate(w, g.models, g.nodes, s, g.so);
	if (!r.is_ok()) {
		std::fprintf(stderr, "dlsched-guard: replay with %s failed: %s\n", s.preset_name().c_str(),
			     r.status().message().c_str());
		return INFINITY;  // a replay that fails counts as lost
	}
	if (r->jobs.empty())
		return INFINITY;
	double sum = 0;
	for (const sim::JobOutcome& j : r->jobs)
		sum += j.finish - j.submit;
	return sum / static_cast<double>(r->jobs.size());
}

int evaluate(const Options& o, Guard& g, double now)
{
	const std::string verdict_path =
		!o.verdict.empty() ? o.verdict : g.config.get_string("GuardVerdictFile");
	if (verdict_path.empty())
		return fail("no verdict file: set GuardVerdictFile= in " + o.config +
			    " (the path sched/dlsched reads) or give --verdict");
	const std::string state_path = !o.state.empty() ? o.state : verdict_path + ".state";
	auto state = read_state(state_path);
	if (!state.is_ok())
		return fail(state.status().message());
	auto history = read_history(o, now, g.settings.window);
	if (!history.is_ok())
		return fail(history.status().message());
	std::istringstream in(*history);
	auto jobs = train::sacct_guard_jobs(in, o.sacct.empty() ? "sacct" : o.sacct, g.models, now);
	if (!jobs.is_ok())
		return fail(jobs.status().message());
	g.known.now = now;
	guard::KnownSummary summary;
	std::vector<GuardKnown> known = guard::known_at(*jobs, g.models, g.known, &summary);
	if (!summary.profile_db_note.empty())
		std::fprintf(stderr,
			     "dlsched-guard: ProfileDB=%s not read (%s): lengths from the jobs' claims "
			     "and time limits, as sched/dlsched does\n",
			     g.known.profile_db.c_str(), summary.profile_db_note.c_str());
	// The window's start is the replay's time 0.
	const double base = now - g.settings.window;
	for (GuardKnown& k : known)
		k.job.submit_time -= base;
	Workload w;
	w.source = o.sacct.empty() ? "sacct" : o.sacct;
	w.jobs = guard_snapshot(known, g.settings.window, g.settings.window,
				g.so.hint_limits.floor_no_limit_s);
	if (!o.snapshot.empty()) {
		std::string csv = "id,submit_s,gpus,epochs,epoch_time_1gpu_s\n";
		char row[160];
		for (const Job& j : w.jobs) {
			std::snprintf(row, sizeof(row), "%llu,%.0f,%d,%.6g,%.6g\n",
				      static_cast<unsigned long long>(j.id), j.submit_time, j.gpus_requested,
				      j.epochs_total, j.epoch_time_1gpu);
			csv += row;
		}
		if (Status s = write_atomically(o.snapshot, csv); !s.is_ok())
			return fail(s.message());
	}
	const double learned = mean_jct(g, w, *g.learned);
	const double heuristic = mean_jct(g, w, *g.heuristic);
	GuardState rule(g.settings.margin, state->choice);
	const GuardVerdict v = rule.evaluate(now, w.jobs.size(), learned, heuristic);
	GuardFileState next = *state;
	next.choice = v.after;
	next.switches += v.switched() ? 1 : 0;
	next.evaluations += 1;
	next.at = now;
	GuardVerdictFile file;
	file.choice = v.after;
	file.at = now;
	file.learned_jct = std::isfinite(learned) ? learned : 0;
	file.heuristic_jct = std::isfinite(heuristic) ? heuristic : 0;
	file.jobs = w.jobs.size();
	file.switches = static_cast<std::uint64_t>(next.switches);
	char st[256];
	std::snprintf(st, sizeof(st),
		      "# dlsched-guard state (delete it to start from GuardPolicy=)\n"
		      "choice=%s\nswitches=%ld\nevaluations=%ld\nat=%.0f\n",
		      guard_choice_name(next.choice), next.switches, next.evaluations, next.at);
	if (Status s = write_atomically(state_path, st); !s.is_ok())
		return fail(s.message());
	if (Status s = write_atomically(verdict_path, format_guard_verdict(file)); !s.is_ok())
		return fail(s.message());
	std::printf(
		"dlsched-guard: %zu job(s) of the last %.0f s (%zu from before it, %zu estimated from the "
		"profile DB): %s %.1f s, %s %.1f s average JCT: %s%s (switches %ld)\n",
		w.jobs.size(), g.settings.window, summary.carried, summary.from_db,
		g.learned->preset_name().c_str(), learned, g.settings.policy.c_str(), heuristic,
		guard_choice_name(v.after),
		v.switched() ? (std::string(" (was ") + guard_choice_name(v.before) + ")").c_str() : "",
		next.switches);
	std::fflush(stdout);
	return 0;
}

}  // namespace

int main(int argc, char** argv)
{
	Options o;
	for (int i = 1; i < argc; ++i) {
		const std::string a = argv[i];
		auto value = [&](std::string& out) {
			if (i + 1 >= argc) {
				std::fprintf(stderr, "dlsched-guard: %s needs a value\n%s", a.c_str(),
					     kUsage);
				std::exit(2);
			}
			out = argv[++i];
		};
		std::string now;
		if (a == "--config")
			value(o.config);
		else if (a == "--cluster")
			value(o.cluster);
		else if (a == "--sacct")
			value(o.sacct);
		else if (a == "--verdict")
			value(o.verdict);
		else if (a == "--state")
			value(o.state);
		else if (a == "--cluster-name")
			value(o.cluster_name);
		else if (a == "--snapshot")
			value(o.snapshot);
		else if (a == "--now") {
			value(now);
			char* end = nullptr;
			o.now = std::strtod(now.c_str(), &end);
			if (now.empty() || *end || !(o.now > 0)) {
				std::fprintf(stderr,
					     "dlsched-guard: --now '%s' is not seconds since the epoch\n",
					     now.c_str());
				return 2;
			}
		} else if (a == "--loop")
			o.loop = true;
		else if (a == "-h" || a == "--help") {
			std::fputs(kUsage, stdout);
			return 0;
		} else {
			std::fprintf(stderr, "dlsched-guard: unknown option '%s'\n%s", a.c_str(), kUsage);
			return 2;
		}
	}
	if (o.config.empty() || o.cluster.empty()) {
		std::fprintf(stderr, "dlsched-guard: --config and --cluster are required\n%s", kUsage);
		return 2;
	}
	if (o.loop && (o.now > 0 || !o.sacct.empty())) {
		std::fprintf(
			stderr,
			"dlsched-guard: --loop reads sacct at the real time: not with --now or --sacct\n");
		return 2;
	}
	models::install();  // dl2, dual-agent
	Guard g;
	if (Status s = set_up(o, g); !s.is_ok())
		return fail(s.message());
	// The verdict decides for slurmctld: its profile DB is refused as sched/dlsched refuses one
	// (writable by every user, or in a directory every user can write).
	trust_files_owned_by(static_cast<std::uint32_t>(geteuid()));
	if (!o.loop)
		return evaluate(o, g, o.now > 0 ? o.now : static_cast<double>(std::time(nullptr)));
	for (;;) {  // a failed evaluation leaves the old verdict to go stale: the heuristic's side
		(void)evaluate(o, g, static_cast<double>(std::time(nullptr)));
		sleep(static_cast<unsigned>(g.settings.interval));
	}
}
