// dlsched-sim: replay a workload on a described GPU cluster with dlsched's schedulers (dlsched-sim(1)).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "bench.h"
#include "capi/dump.h"
#include "cluster_spec.h"
#include "engine.h"
#include "generator.h"
#include "metrics.h"
#include "policy/guard.h"
#include "policy/registry.h"
#include "policy/scheduler.h"
#include "profiledb/profile_db.h"
#include "util/csv.h"
#include "util/flag_table.h"
#include "workload/workload.h"
#ifdef DLSCHED_WITH_MODELS
#include "models/learned.h"
#endif

using namespace dlsched;
using namespace dlsched::sim;

namespace {

// The usage lines; the options part of --help is written by the flag table (sim_flags).
const char kUsage[] =
	"usage: dlsched-sim run --workload FILE --cluster SPEC --policy NAME [options]\n"
	"       dlsched-sim compare --workload FILE --cluster SPEC --policies A,B,... [options]\n"
	"       dlsched-sim generate --jobs N [--cluster SPEC] [--load X] [--seed N] > FILE\n"
	"       dlsched-sim bench [--policies A,B,...] [--workload FILE] [--quick] [--json FILE]\n"
	"       dlsched-sim decide --view FILE [--config FILE] [--set Key=Value]... [--profiles DIR]\n"
	"       dlsched-sim --print-config [--config FILE] [--set Key=Value]...\n"
	"       dlsched-sim --list-policies | --help | --version\n";

struct Options {
	std::string command;
	std::string workload, format = "auto", cluster, policy, config, json, profiles, experience, demand,
			      quotas;
	std::vector<std::string> policies;
	std::vector<std::string> sets;
	ReadOptions read;
	BuildOptions build;
	double restart_cost = -1;
	bool restart_model = false;
	PlacementModel placement_model = PlacementModel::kNodes;
	Estimates estimates = Estimates::kOracle;
	bool seed_given = false;
	bool drop_unrunnable = false;
	bool print_config = false, list_policies = false, quick = false;
	int progress = -1;  // -1: when stderr is a tty
	// generate
	std::size_t gen_jobs = 0;
};

// What the flag table writes before it is turned into Options.
struct RawFlags {
	std::string policies;
	bool progress = false, quiet = false, version = false;
};

// --record-experience: the rounds a learned ordering decided, as sched/dlsched records them
// (RecordExperience=yes), for trying `dlsched-train online` without a cluster.
constexpr char kExperienceCluster[] = "dlsched-sim";

Status write_experience(const std::string& path, const std::vector<PolicyStep>& steps)
{
	auto db = db::ProfileDb::open_writer(path);
	if (!db.is_ok())
		return db.status();
	return db->add_experience(kExperienceCluster, steps);
}

int usage_error(const std::string& msg)
{
	std::fprintf(stderr, "dlsched-sim: %s\n(try dlsched-sim --help)\n", msg.c_str());
	return 2;
}

std::vector<std::string> split(const std::string& s, char sep)
{
	std::vector<std::string> out;
	std::size_t start = 0;
	while (start <= s.size()) {
		std::size_t p = s.find(sep, start);
		std::string item = s.substr(start, p == std::string::npos ? std::string::npos : p - start);
		if (!item.empty())
			out.push_back(item);
		if (p == std::string::npos)
			break;
		start = p + 1;
	}
	return out;
}

// Every flag of run, compare, generate, bench and --print-config: what it takes, its range, where
// its value goes and its --help line.
FlagTable sim_flags(Options& o, RawFlags& r)
{
	FlagSpec set = value_flag("--set", "Key=Value", "override one dlsched.conf key (repeatable)",
				  [&o](const std::string& v) {
					  o.sets.push_back(v);
					  return Status::ok();
				  });
	set.repeatable = true;  // the only flag documented as repeatable
	return FlagTable({
		string_flag("--workload", "FILE", "the workload (run, compare; bench: the window)",
			    &o.workload),
		string_flag("--format", "auto|philly|pollux|dlsched",
			    "workload format (default: from the header)", &o.format),
		string_flag("--cluster", "SPEC", "NxG (N nodes of G GPUs) or a cluster file", &o.cluster),
		string_flag("--policy", "NAME", "run: the preset (see --list-policies; default Policy=)",
			    &o.policy),
		string_flag("--policies", "A,B,...", "compare, bench: the presets, in this order",
			    &r.policies),
		string_flag("--config", "FILE", "dlsched.conf to read (default: built-in defaults)",
			    &o.config),
		set,
		whole_flag("--seed", "N", "seed of the workload builder and the policies (default 1)",
			   &o.build.seed, 0, 2147483647),  // the range of the Seed key
		string_flag("--json", "FILE", "write the metrics as JSON", &o.json),
		string_flag(
			"--record-experience", "DB",
			"append the learned rounds (dl2, dual-agent) to DB's experience table, as\n"
			"RecordExperience=yes does in Slurm (cluster dlsched-sim; for dlsched-train online)",
			&o.experience),
		string_flag("--profiles", "DIR", "per-model profiles (default: the installed data)",
			    &o.profiles),
		number_flag("--elastic-fraction", "F",
			    "mark this fraction of jobs elastic (default 0: rigid)",
			    &o.build.elastic_fraction, 0, 1),
		number_flag("--elastic-max-factor", "X",
			    "elastic jobs may use 1 to X times their requested GPUs (default 2)",
			    &o.build.elastic_max_factor, 1, 64),
		number_flag("--deadline-fraction", "F", "give this fraction of jobs a deadline (default 0)",
			    &o.build.deadline_fraction, 0, 1),
		value_flag("--deadline-slack", "S|LO:HI",
			   "deadline = submit + S x runtime alone at the requested GPUs\n"
			   "(default 1.5); LO:HI: each job's S uniform in [LO, HI], seeded; below 1\n"
			   "only more GPUs can meet it. Deadline jobs without a QoS get QoS deadline",
			   [&o](const std::string& v) { return parse_deadline_slack(v, o.build); }),
		switch_flag("--deadline-elastic",
			    "deadline jobs are elastic: 1 to --elastic-max-factor x requested GPUs",
			    &o.build.deadline_elastic),
		number_flag("--load", "X", "compress inter-arrival times X-fold (default 1)",
			    &o.build.load_scale, 0.001, 1000),
		number_flag("--time-limit-factor", "F", "time limit = F x runtime alone (default 2)",
			    &o.build.time_limit_factor, 1, 1000),
		whole_flag("--max-jobs", "N", "only the first N jobs", &o.build.max_jobs, 1, 1000000000),
		whole_flag("--jobs", "N", "generate: the number of jobs", &o.gen_jobs, 1, 100000000),
		value_flag("--restart-cost", "S|model",
			   "seconds lost per restart or resize (default 0); model: each job's\n"
			   "predicted suspend and resume from its model (two-step preemption)",
			   [&o](const std::string& v) {
				   if (v == "model") {
					   o.restart_model = true;
					   return Status::ok();
				   }
				   return number_value(v, 0, 86400, o.restart_cost);
			   }),
		number_flag("--priority-fraction", "F",
			    "give this fraction of the jobs without a QoS the QoS high (default 0)",
			    &o.build.priority_fraction, 0, 1),
		value_flag("--placement-model", "M",
			   "nodes: a job runs at the speed of the nodes it spans (default);\n"
			   "count: GPUs counted anywhere, no locality slowdown (PlacementPolicy=count)",
			   [&o](const std::string& v) {
				   if (v != "count" && v != "nodes")
					   return invalid_argument("'" + v + "': expected count or nodes");
				   o.placement_model =
					   v == "count" ? PlacementModel::kCount : PlacementModel::kNodes;
				   return Status::ok();
			   }),
		string_flag("--inference-demand", "FILE",
			    "inference demand (time_s,demand: the fraction of the inference\n"
			    "nodes' GPUs inference needs) from the workload's start, repeated;\n"
			    "a Loaning policy (preset aryl) lends the rest to training",
			    &o.demand),
		string_flag("--quotas", "proportional|FILE",
			    "each account's guaranteed GPUs (FairnessPolicy=quota, the shares\n"
			    "of fairshare): in proportion to its GPU-hours in the workload, summing\n"
			    "to the training GPUs, or from FILE's account,gpus lines; every run then\n"
			    "reports by_account and fairness (accounts: Philly's vc, the user column)",
			    &o.quotas),
		value_flag("--estimates", "oracle|predicted",
			   "what policies see of each job's length: the truth (default), or\n"
			   "what a controller would know: its own timed epochs, else same-model\n"
			   "history, else its model profile bounded by its time limit, with the\n"
			   "errors dlsched-db accuracy measured (dlsched-sim(1), ESTIMATES)",
			   [&o](const std::string& v) {
				   auto e = parse_estimates(v);  // its message names --estimates
				   if (e.is_ok())
					   o.estimates = e.value();
				   return e.status();
			   }),
		switch_flag("--skip-bad-lines", "skip malformed workload lines (their count is printed)",
			    &o.read.skip_bad_lines),
		switch_flag("--drop-unrunnable", "leave out jobs no eligible nodes can hold (else an error)",
			    &o.drop_unrunnable),
		switch_flag("--progress",
			    "progress on stderr (default: on a terminal, or every 10 s after 3 s)",
			    &r.progress),
		switch_flag("--quiet", "no progress", &r.quiet),
		switch_flag("--quick", "bench: a shorter run", &o.quick),
		switch_flag("--print-config", "print the effective configuration and exit", &o.print_config),
		switch_flag("--list-policies", "list the presets and policies and exit", &o.list_policies),
		switch_flag("--version", "print the version and exit", &r.version),
	});
}

// The flags of `decide`.
FlagTable decide_flags(std::string& view, std::string& config, std::string& profiles,
		       std::vector<std::string>& sets)
{
	FlagSpec set = value_flag("--set", "Key=Value", "override one key of the recording (repeatable)",
				  [&sets](const std::string& v) {
					  sets.push_back(v);
					  return Status::ok();
				  });
	set.repeatable = true;
	return FlagTable({
		string_flag("--view", "FILE", "decide: the recording (a file DumpViews= wrote)", &view),
		string_flag("--config", "FILE", "decide: this dlsched.conf, not the recording's keys",
			    &config),
		string_flag("--profiles", "DIR", "decide: per-model profiles", &profiles),
		set,
	});
}

void print_help()
{
	Options o;
	RawFlags r;
	std::string view, config, profiles;
	std::vector<std::string> sets;
	std::printf("%s\noptions:\n%s\ndecide's options:\n%s", kUsage, sim_flags(o, r).options_help().c_str(),
		    decide_flags(view, config, profiles, sets).options_help().c_str());
}

// Parses argv into `o`; returns -1 to go on, or an exit code.
int parse_args(int argc, char** argv, Options& o)
{
	int first = 1;
	if (first < argc && argv[first][0] != '-')
		o.command = argv[first++];
	RawFlags r;
	FlagTable flags = sim_flags(o, r);
	if (Status st = flags.parse(argc, argv, first); !st.is_ok())
		return usage_error(st.message());
	if (flags.help_asked()) {
		print_help();
		return 0;
	}
	if (r.version) {
		std::printf("dlsched-sim %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (Status st :
	     {flags.exclusive({"--progress", "--quiet"}), flags.exclusive({"--policy", "--policies"})})
		if (!st.is_ok())
			return usage_error(st.message());
	o.policies = split(r.policies, ',');
	o.seed_given = flags.given("--seed");
	o.progress = r.progress ? 1 : r.quiet ? 0 : -1;
	return -1;
}

// The effective configuration: file, then --set, then the command line's own flags.
Result<Config> make_config(const Options& o)
{
	Config c;
	if (!o.config.empty()) {
		auto loaded = Config::load_file(o.config);
		if (!loaded.is_ok())
			return loaded.status();
		c = loaded.value();
	}
	for (const std::string& kv : o.sets) {
		std::size_t eq = kv.find('=');
		if (eq == std::string::npos)
			return invalid_argument("--set '" + kv + "': expected Key=Value");
		// --set is repeatable for different keys; one key twice with two values is a conflict, as in
		// a file.
		const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
		if (c.origin(key) == "--set" && c.get_text(key) != value)
			return invalid_argument("--set " + kv + " conflicts with --set " + key + "=" +
						c.get_text(key) + ": give the key once");
		Status st = c.set(key, value, "--set");
		if (!st.is_ok())
			return st;
	}
	if (o.restart_cost >= 0 || o.restart_model) {
		Status st = c.set("RestartCost",
				  o.restart_model ? std::string("model") : std::to_string(o.restart_cost),
				  "--restart-cost");
		if (!st.is_ok())
			return st;
	}
	if (o.placement_model == PlacementModel::kCount) {
		Status st = c.set("PlacementPolicy", "count", "--placement-model");
		if (!st.is_ok())
			return st;
	}
	if (o.seed_given) {
		Status st = c.set("Seed", std::to_string(o.build.seed), "--seed");
		if (!st.is_ok())
			return st;
	}
	if (!o.profiles.empty()) {
		Status st = c.set("ModelProfiles", o.profiles, "--profiles");
		if (!st.is_ok())
			return st;
	}
	return c;
}

int fail(const Status& st)
{
	std::fprintf(stderr, "dlsched-sim: %s\n", st.message().c_str());
	return 1;
}

int list_policies(const PolicyRegistry& r)
{
	for (const char* kind :
	     {"preset", "ordering", "allocation", "placement", "admission", "preemption", "loaning"}) {
		std::printf("%s%s:\n", kind,
			    std::strcmp(kind, "preset") == 0 ? "s (--policy, Policy=)" : " policies");
		for (const auto& e : r.list(kind)) {
			// A learned preset is listed in every build; say where it cannot run.
			bool built = true;
			if (std::strcmp(kind, "preset") == 0) {
				auto spec = r.preset(e.name);
				bool learned = spec.is_ok() && (spec.value().ordering == kLearnedPolicy ||
								spec.value().allocation == kLearnedPolicy);
				if (learned) {
					built = false;
					for (const auto& o : r.list("ordering"))
						built = built || o.name == kLearnedPolicy;
				}
			}
			std::printf("  %-16s %s%s\n", e.name.c_str(), e.help.c_str(),
				    built ? "" : " [not in this build: needs libtorch]");
		}
	}
	return 0;
}

int simulate_policies(const Options& o, const Config& base, const PolicyRegistry& registry,
		      const ModelCatalog& models)
{
	if (o.workload.empty())
		return usage_error(o.command + " needs --workload FILE");
	if (o.cluster.empty())
		return usage_error(o.command + " needs --cluster NxG or a cluster file");
	std::vector<std::string> policies = o.policies;
	if (o.command == "run") {
		if (o.policy.empty() && !o.policies.empty())
			return usage_error("run takes --policy NAME (compare takes --policies)");
		policies = {o.policy.empty() ? base.get_string("Policy") : o.policy};
	} else if (policies.empty()) {
		return usage_error("compare needs --policies A,B,...");
	}
	auto fmt = parse_workload_format(o.format);
	if (!fmt.is_ok())
		return usage_error(fmt.status().message());
	ReadOptions read = o.read;
	read.format = fmt.value();
	auto workload = load_workload(o.workload, read, o.build, models);
	if (!workload.is_ok())
		return fail(workload.status());
	if (workload->skipped_lines)
		std::fprintf(stderr, "dlsched-sim: skipped %zu malformed line(s) of %s\n",
			     workload->skipped_lines, o.workload.c_str());
	auto cluster = parse_cluster(o.cluster, models.gpu_types());
	if (!cluster.is_ok())
		return fail(cluster.status());
	const std::vector<Node>& nodes = cluster->nodes;
	// The machines' hidden speeds (Fluctuation=): the same for every policy compared.
	const std::vector<double> speed_factor =
		draw_speed_factors(cluster->fluctuation, static_cast<std::uint64_t>(base.get_int("Seed")));

	const std::vector<double> bound = bound_runtimes(*workload, models, nodes);
	InferenceDemand demand;
	if (!o.demand.empty()) {
		auto d = InferenceDemand::load(o.demand);
		if (!d.is_ok())
			return fail(d.status());
		demand = std::move(d.value());
		bool inference = false;
		for (const Node& n : nodes)
			inference = inference || (n.kind == PartitionKind::kInference && n.loanable);
		if (!inference)
			return fail(invalid_argument(
				"--inference-demand " + o.demand + ": the cluster " + o.cluster +
				" has no loanable inference nodes (a cluster file line with Kind=inference "
				"Loanable=yes; dlsched-sim(1), CLUSTER FILES)"));
	}
	// The accounts: --quotas gives their quotas (and shares); without it every account of the
	// workload has one share (fairshare) and no quota.
	std::vector<Account> accounts = workload_accounts(*workload);
	if (!o.quotas.empty()) {
		int training = 0;
		for (const Node& nd : nodes)
			training += nd.kind == PartitionKind::kTraining ? nd.gpus_total : 0;
		if (o.quotas == "proportional") {
			accounts = proportional_quotas(*workload, bound, training);
		} else {
			auto q = load_quotas(o.quotas, *workload, training);
			if (!q.is_ok())
				return fail(q.status());
			accounts = std::move(q.value());
		}
	}
	// Progress on stderr: on a terminal a line that rewrites itself (unless --quiet); otherwise, for a
	// run longer than a few seconds, one line every 10 s (always with --progress).
	const bool tty = isatty(STDERR_FILENO);
	const bool show_progress = o.progress != 0;
	std::vector<RunMetrics> runs;
	for (const std::string& p : policies) {
		Config c = base;
		// run without --policy takes Policy= from --config, and errors name that file and line.
		if (o.command != "run" || !o.policy.empty()) {
			Status st = c.set("Policy", p, o.command == "run" ? "--policy" : "--policies");
			if (!st.is_ok())
				return fail(st);
		}
		auto sched = Scheduler::create(c, registry);
		if (!sched.is_ok())
			return fail(sched.status());
		// The learned policy's guard (LearnedGuard=): GuardPolicy='s scheduler beside it.
		const bool learned = (*sched)->spec().ordering == std::string(kLearnedPolicy) ||
				     (*sched)->spec().allocation == std::string(kLearnedPolicy);
		auto guard = GuardSettings::from_config(c, learned);
		if (!guard.is_ok())
			return fail(guard.status());
		std::unique_ptr<Scheduler> guard_sched;
		if (guard->enabled) {
			auto gc = guard_policy_config(c, *guard);
			if (!gc.is_ok())
				return fail(gc.status());
			auto g = Scheduler::create(*gc, registry);
			if (!g.is_ok())
				return fail(invalid_argument("GuardPolicy=" + guard->policy + ": " +
							     g.status().message()));
			guard_sched = std::move(g.value());
		}
		const std::string fell_back = (*sched)->fallback();
		if (!fell_back.empty())  // said once, where the run is named too
			std::fprintf(stderr, "dlsched-sim: %s\n", (*sched)->notes().c_str());
		SimOptions so;
		so.sched_interval = c.get_double("SchedInterval");
		so.sched_on_events = c.get_bool("SchedOnEvents");
		so.restart_model = c.get_word("RestartCost") == "model";
		so.restart_cost = so.restart_model ? 0 : c.get_double("RestartCost");
		so.overhead = predict::OverheadParams::from_config(c);
		so.preempt_grace = c.get_double("PreemptGrace");
		so.requeue_delay = c.get_double("RequeueDelay");
		so.drop_unrunnable = o.drop_unrunnable;
		so.placement_model = o.placement_model;
		so.speed_factor = speed_factor;
		so.seed = static_cast<std::uint64_t>(c.get_int("Seed"));
		so.inference_demand = demand;
		so.reclaim_timeout = c.get_double("ReclaimTimeout");
		so.accounts = accounts;
		so.quota_reclaim_timeout = c.get_double("QuotaReclaimTimeout");
		so.usage_half_life = c.get_double("PriorityDecayHalfLife");
		so.estimates = o.estimates;
		so.hint_limits.trust_factor = c.get_double("HintTrustFactor");
		so.hint_limits.floor_no_limit_s = c.get_double("HintFloorNoTimeLimit");
		so.guard = guard.value();
		so.guard_scheduler = guard_sched.get();
		const auto started = std::chrono::steady_clock::now();
		auto last_line = started;
		bool drew = false;
		if (show_progress)
			so.progress = [&](Seconds t, std::size_t done, std::size_t total) {
				const auto now = std::chrono::steady_clock::now();
				if (tty) {
					std::fprintf(stderr, "\r[%s] simulated %s, %zu/%zu jobs done   ",
						     p.c_str(), human_duration(t).c_str(), done, total);
					drew = true;
				} else if (now - started > std::chrono::seconds(3) &&
					   (now - last_line >= std::chrono::seconds(10) || o.progress == 1)) {
					std::fprintf(stderr,
						     "dlsched-sim: [%s] simulated %s, %zu/%zu jobs done\n",
						     p.c_str(), human_duration(t).c_str(), done, total);
					last_line = now;
				}
			};
		StepLog steps;
		if (!o.experience.empty())
			so.recorder = &steps;
		auto r = simulate(*workload, models, nodes, **sched, so);
		if (drew)
			std::fprintf(stderr, "\r%*s\r", 70, "");
		if (!r.is_ok())
			return fail(r.status());
		if (r->dropped)
			std::fprintf(stderr, "dlsched-sim: dropped %zu job(s) no eligible nodes can hold\n",
				     r->dropped);
		// Every switch of the guard, logged as the plugin logs it.
		for (const GuardVerdict& v : r->guard_log)
			if (v.switched())
				std::fprintf(stderr,
					     "dlsched-sim: [%s] guard at %s: %s -> %s (replay of %zu job(s) "
					     "of the last %s: %s %s, "
					     "%s %s)\n",
					     p.c_str(), human_duration(v.at).c_str(),
					     guard_choice_name(v.before), guard_choice_name(v.after), v.jobs,
					     human_duration(guard->window).c_str(), p.c_str(),
					     human_duration(v.learned_jct).c_str(), guard->policy.c_str(),
					     human_duration(v.heuristic_jct).c_str());
		runs.push_back(compute_metrics(p, *r, *workload, bound));
		runs.back().fallback = fell_back;
		if (!o.quotas.empty())
			runs.back().fairness = compute_fairness(*r, *workload, bound);
		runs.back().learned = learned;
		runs.back().guard_policy = guard->enabled ? guard->policy : std::string();
		if (!o.experience.empty()) {
			Status st = write_experience(o.experience, steps.steps);
			if (!st.is_ok())
				return fail(st);
			std::fprintf(stderr,
				     "dlsched-sim: recorded %zu learned round(s) of %s in %s (cluster %s)\n",
				     steps.steps.size(), p.c_str(), o.experience.c_str(), kExperienceCluster);
		}
	}
	std::fputs(format_table(runs).c_str(), stdout);
	if (!o.json.empty()) {
		json::Value doc = json::Value::object();
		json::Value arr = json::Value::array();
		for (const RunMetrics& m : runs)
			arr.push_back(to_json(m));
		doc.set("runs", arr);
		std::ofstream out(o.json);
		if (!out)
			return fail(io_error(o.json + ": cannot write JSON output"));
		out << doc.dump() << "\n";
	}
	return 0;
}

}  // namespace

namespace {

// Keys of a recording that name files of the host that recorded it, or write: a replay leaves
// them out (it reads no profile DB: the recording's "prepared" jobs stand for it).
// QuotaFile=: the recording carries the quotas it read ("quota_file"), which the replay uses.
const char* const kHostKeys[] = {"ProfileDB",     "RecordExperience",    "DumpViews",
				 "LoanStateFile", "InferenceDemandFile", "QuotaFile"};

// dlsched-sim decide --view FILE: replays one cycle sched/dlsched recorded (DumpViews=) through the
// C ABI and prints its decisions as the recording's "decisions" JSON (dlsched-sim(1), DECIDE).
int decide_main(int argc, char** argv)
{
	std::string view, config_file, profiles;
	std::vector<std::string> sets;
	FlagTable flags = decide_flags(view, config_file, profiles, sets);
	if (Status st = flags.parse(argc, argv, 2); !st.is_ok())
		return usage_error("decide: " + st.message());
	if (flags.help_asked()) {
		print_help();
		return 0;
	}
	if (view.empty())
		return usage_error("decide needs --view FILE (a file DumpViews= wrote)");
	std::ifstream in(view, std::ios::binary);
	if (!in)
		return fail(not_found(view + ": cannot be read"));
	const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	auto file = json::Value::parse(text, view);
	if (!file.is_ok())
		return fail(file.status());
	// The configuration: --config's file, else the recording's keys (less the host's files); then
	// --set and --profiles.
	std::map<std::string, std::string> keys;
	if (!config_file.empty()) {
		auto c = Config::load_file(config_file);
		if (!c.is_ok())
			return fail(c.status());
		for (const ConfigKey& k : config_keys())
			if (c->is_set(k.name))
				keys[k.name] = c->get_text(k.name);
	} else {
		const json::Value recorded = file->is_object() ? file->get("config") : json::Value();
		if (!recorded.is_valid() || !recorded.is_object())
			return fail(parse_error(
				view + ": config: missing or not an object (not a DumpViews= file?)"));
		for (const std::string& k : recorded.keys()) {
			bool host = false;
			for (const char* h : kHostKeys)
				host = host || k == h;
			const auto v = recorded.get(k).as_string();
			if (!host && v)
				keys[k] = *v;
		}
	}
	for (const std::string& kv : sets) {
		const auto eq = kv.find('=');
		if (eq == std::string::npos || eq == 0)
			return usage_error("--set '" + kv + "' is not Key=Value");
		keys[kv.substr(0, eq)] = kv.substr(eq + 1);
	}
	if (!profiles.empty())
		keys["ModelProfiles"] = profiles;
	char conf[] = "/tmp/dlsched-sim-decide.XXXXXX";
	const int fd = mkstemp(conf);
	if (fd < 0)
		return fail(io_error(std::string("cannot create a temporary file in /tmp: ") +
				     std::strerror(errno)));
	std::string lines;
	for (const auto& [k, v] : keys)
		lines +=
			k + "=" + (v.find_first_of(" \t#") == std::string::npos ? v : "\"" + v + "\"") + "\n";
	const bool wrote = write(fd, lines.data(), lines.size()) == static_cast<ssize_t>(lines.size());
	close(fd);
#ifdef DLSCHED_WITH_MODELS
	dlsched::models::install();  // dl2, dual-agent
#endif
	dlsched_error_t err;
	dlsched_scheduler_t* sched = nullptr;
	int rc = wrote ? dlsched_scheduler_create(conf, &sched, &err) : DLSCHED_EIO;
	unlink(conf);
	if (!wrote)
		return fail(io_error(std::string(conf) + ": cannot be written"));
	if (rc != DLSCHED_OK)
		return fail(invalid_argument(std::string("the recording's configuration: ") + err.message));
	std::string decisions;
	rc = dlsched_replay(sched, text, view, decisions, &err);
	dlsched_scheduler_destroy(sched);
	if (rc != DLSCHED_OK)
		return fail(invalid_argument(err.message));
	std::printf("%s\n", decisions.c_str());
	return 0;
}

}  // namespace

int main(int argc, char** argv)
{
	if (argc >= 2 && std::strcmp(argv[1], "decide") == 0)
		return decide_main(argc, argv);
	Options o;
	int rc = parse_args(argc, argv, o);
	if (rc >= 0)
		return rc;
	auto config = make_config(o);
	if (!config.is_ok())
		return fail(config.status());
	// Seed= in a --config file seeds the workload builder too (--seed has set both already).
	o.build.seed = static_cast<std::uint64_t>(config->get_int("Seed"));
#ifdef DLSCHED_WITH_MODELS
	dlsched::models::install();  // dl2, dual-agent
#endif
	PolicyRegistry registry;
	register_builtin_policies(registry);
	if (o.list_policies)
		return list_policies(registry);
	if (o.print_config) {
		Config c = config.value();
		if (!o.policy.empty()) {
			Status st = c.set("Policy", o.policy, "--policy");
			if (!st.is_ok())
				return fail(st);
		}
		// What it prints must be what the plugins would run: the same checks as when they load it
		// (the model profiles, every policy name and the policies' own keys), or exit 1 saying why.
		auto profiles = load_model_catalog(c.get_string("ModelProfiles"));
		if (!profiles.is_ok())
			return fail(profiles.status());
		auto sched = Scheduler::create(c, registry);
		if (!sched.is_ok())
			return fail(sched.status());
		std::fputs(c.dump().c_str(), stdout);
		return 0;
	}
	if (o.command.empty())
		return usage_error("no command given (run, compare, generate or bench)");
	auto models = load_model_catalog(config->get_string("ModelProfiles"));
	if (!models.is_ok())
		return fail(models.status());

	if (o.command == "run" || o.command == "compare")
		return simulate_policies(o, config.value(), registry, models.value());
	if (o.command == "generate") {
		if (o.gen_jobs == 0)
			return usage_error("generate needs --jobs N");
		GeneratorOptions g;
		g.jobs = o.gen_jobs;
		g.load = o.build.load_scale;
		g.seed = o.build.seed;
		if (!o.cluster.empty()) {
			auto nodes = parse_cluster_spec(o.cluster);
			if (!nodes.is_ok())
				return fail(nodes.status());
			g.cluster_gpus = 0;
			for (const Node& n : *nodes)
				g.cluster_gpus += n.gpus_total;
		}
		generate_trace(g, models.value(), std::cout);
		return 0;
	}
	if (o.command == "bench") {
		BenchOptions b;
		b.policies =
			o.policies.empty()
				? std::vector<std::string>{"fifo", "slurm-backfill", "srtf", "tiresias-las",
							   "drf",  "optimus",        "edf"}
				: o.policies;
		b.window = o.workload.empty()
				   ? default_data_dir() + "/traces/philly/philly_2017-10-02_5000.csv"
				   : o.workload;
		b.json_path = o.json;
		b.quick = o.quick;
		return run_bench(b, config.value(), registry, models.value());
	}
	return usage_error("unknown command '" + o.command + "'");
}
