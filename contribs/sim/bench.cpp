#include "bench.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <time.h>
#include <unistd.h>

#include "cluster_spec.h"
#include "engine.h"
#include "generator.h"
#include "json/json.h"
#include "metrics.h"
#include "policy/scheduler.h"
#include "util/random.h"

namespace dlsched::sim {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0)
{
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU seconds the calling thread has used (decide() runs in it: libtorch is held to one thread).
double thread_cpu_s()
{
	timespec t{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::string ms_text(double ms)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.2f ms", ms);
	return buf;
}

// A cycle's decision latency: wall time, and the deciding thread's CPU time, which a machine shared
// with other work does not inflate (its wall time waits for the cores too).
struct Latency {
	double p50 = 0, p99 = 0;          // wall ms
	double cpu_p50 = 0, cpu_p99 = 0;  // CPU ms
};

// A 64x8 cluster with half its GPUs busy (all of them one account's, borrowed), `pending`
// Philly-sized jobs waiting (half of them elastic, 1 GPU to twice their request) of kAccounts
// accounts with equal quotas, and a full history of speed measurements (what the simulator's view
// carries, for speed-aware placements): decide() latency.
constexpr int kAccounts = 8;
Latency cycle_latency(const Scheduler& s, const ModelCatalog& models, std::size_t pending, int rounds)
{
	std::vector<Node> nodes = parse_cluster_spec("64x8").value();
	std::vector<Job> jobs;
	jobs.reserve(pending + 300);
	Rng rng(7, 1);
	Rng elastic_rng(7, 2);  // its own stream: the other draws are as before
	JobId id = 1;
	// Running jobs on the first half of the nodes.
	for (NodeIndex n = 0; n < 32; ++n) {
		for (int g = 0; g < 8; g += 2) {
			Job j;
			j.id = id++;
			j.user = "u" + std::to_string(rng.below(50));
			j.account = "t0";  // one account borrowed the busy half (FairnessPolicy=quota
					   // reclaims it)
			j.model = static_cast<int>(rng.below(static_cast<std::uint64_t>(models.size())));
			j.gpus_requested = j.gpus_min = j.gpus_max = j.gpus_allocated = 2;
			j.state = JobState::kRunning;
			j.placement = {{n, 2}};
			j.epochs_total = 100;
			j.epochs_done = 10;
			j.epoch_time_1gpu = 600;
			j.start_time = 0;
			j.time_limit = 86400;
			j.attained_gpu_s = rng.uniform() * 50000;
			j.executed_s = 1000;
			nodes[n].gpus_free -= 2;
			jobs.push_back(j);
		}
	}
	for (std::size_t k = 0; k < pending; ++k) {
		Job j;
		j.id = id++;
		const auto user = rng.below(50);
		j.user = "u" + std::to_string(user);
		j.account = "t" + std::to_string(user % kAccounts);
		j.model = static_cast<int>(rng.below(static_cast<std::uint64_t>(models.size())));
		const double u = rng.uniform();
		j.gpus_requested = u < 0.93 ? 1 : u < 0.955 ? 2 : u < 0.98 ? 4 : 8;
		j.gpus_min = j.gpus_max = j.gpus_requested;
		if (elastic_rng.uniform() <
		    0.5) {  // half of them elastic, 1 GPU to 2x (elastic policies' work)
			j.gpus_min = 1;
			j.gpus_max = 2 * j.gpus_requested;
		}
		j.submit_time = static_cast<double>(k);
		j.epochs_total = 1 + static_cast<double>(rng.below(200));
		j.epoch_time_1gpu = 60 + rng.uniform() * 600;
		j.time_limit = 2 * j.epochs_total * j.epoch_time_1gpu;
		jobs.push_back(j);
	}
	std::vector<SpeedObservation> observations(SimOptions().observation_history);
	for (std::size_t k = 0; k < observations.size(); ++k) {
		SpeedObservation& o = observations[k];
		o.node = static_cast<NodeIndex>(rng.below(nodes.size()));
		o.model = static_cast<int>(rng.below(static_cast<std::uint64_t>(models.size())));
		o.speed = std::exp(0.1 * rng.normal());
		o.at = static_cast<double>(k);
	}
	// The teams (FairnessPolicy=): equal quotas summing to the cluster, usage of a few hours each.
	std::vector<Account> accounts;
	for (int a = 0; a < kAccounts; ++a)
		accounts.push_back({"t" + std::to_string(a), 512.0 / kAccounts, 1, 3600.0 * (a + 1)});
	ClusterView v;
	v.accounts = Span<const Account>(accounts.data(), accounts.size());
	v.now = static_cast<double>(pending) + 10;
	v.nodes = Span<const Node>(nodes.data(), nodes.size());
	v.models = &models;
	v.observations = Span<const SpeedObservation>(observations.data(), observations.size());
	for (const Job& j : jobs)
		(j.running() ? v.running : v.pending).push_back(&j);
	std::vector<double> ms, cpu_ms;
	for (int r = 0; r < rounds; ++r) {
		v.cycle = static_cast<std::uint64_t>(r);
		auto t0 = Clock::now();
		const double c0 = thread_cpu_s();
		Decisions d = s.decide(v);
		cpu_ms.push_back((thread_cpu_s() - c0) * 1000);
		ms.push_back(seconds_since(t0) * 1000);
		if (d.actions.empty() && pending > 0)
			std::fprintf(stderr, "bench: no decision at all (unexpected)\n");
	}
	return {percentile(ms, 50), percentile(ms, 99), percentile(cpu_ms, 50), percentile(cpu_ms, 99)};
}

}  // namespace

int run_bench(const BenchOptions& opt, const Config& base, const PolicyRegistry& registry,
	      const ModelCatalog& models)
{
	const std::size_t big = opt.quick ? 20000 : 100000;
	const int rounds = opt.quick ? 10 : 40;
	std::printf(
		"dlsched-sim bench (one core; targets: cycle p99 <= 20 ms at 1,000 pending and <= 200 ms at "
		"10,000; 5,000-job window < 10 s; 100,000 jobs < 120 s)\n\n");
	std::printf("%-16s %10s %10s %10s %10s %12s %10s %12s %10s\n", "policy", "1k p50", "1k p99",
		    "10k p50", "10k p99", "window s", "jobs/s", big == 100000 ? "100k s" : "20k s", "jobs/s");
	std::fflush(stdout);

	// The generated trace, written once.
	char path[] = "/tmp/dlsched-bench-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		std::perror("bench: mkstemp");
		return 1;
	}
	close(fd);
	{
		std::ofstream out(path);
		GeneratorOptions g;
		g.jobs = big;
		g.cluster_gpus = 512;
		g.load = 0.9;
		g.seed = 1;
		generate_trace(g, models, out);
	}
	json::Value runs = json::Value::array();
	std::string cpu_lines;
	int status = 0;
	for (const std::string& p : opt.policies) {
		Config c = base;
		Status st = c.set("Policy", p, "bench");
		auto s = st.is_ok() ? Scheduler::create(c, registry) : Result<std::unique_ptr<Scheduler>>(st);
		if (!s.is_ok()) {
			std::fprintf(stderr, "bench: %s\n", s.status().message().c_str());
			status = 1;
			continue;
		}
		auto l1 = cycle_latency(**s, models, 1000, rounds);
		auto l10 = cycle_latency(**s, models, 10000, rounds / 2);
		double throughput[2][2] = {{0, 0}, {0, 0}};
		const std::string traces[2] = {opt.window, path};
		for (int k = 0; k < 2; ++k) {
			auto w = load_workload(traces[k], ReadOptions{}, BuildOptions{}, models);
			if (!w.is_ok()) {
				std::fprintf(stderr, "bench: %s\n", w.status().message().c_str());
				status = 1;
				continue;
			}
			SimOptions so;
			so.sched_interval = c.get_double("SchedInterval");
			so.sched_on_events = c.get_bool("SchedOnEvents");
			auto t0 = Clock::now();
			auto r = simulate(*w, models, parse_cluster_spec("64x8").value(), **s, so);
			const double secs = seconds_since(t0);
			if (!r.is_ok()) {
				std::fprintf(stderr, "bench: %s\n", r.status().message().c_str());
				status = 1;
				continue;
			}
			throughput[k][0] = secs;
			throughput[k][1] = static_cast<double>(w->jobs.size()) / secs;
		}
		std::printf("%-16s %8.2fms %8.2fms %8.2fms %8.2fms %12.2f %10.0f %12.2f %10.0f\n", p.c_str(),
			    l1.p50, l1.p99, l10.p50, l10.p99, throughput[0][0], throughput[0][1],
			    throughput[1][0], throughput[1][1]);
		cpu_lines += "  " + p + ": 1k p50 " + ms_text(l1.cpu_p50) + ", p99 " + ms_text(l1.cpu_p99) +
			     "; 10k p50 " + ms_text(l10.cpu_p50) + ", p99 " + ms_text(l10.cpu_p99) + "\n";
		std::fflush(stdout);
		json::Value o = json::Value::object();
		o.set("policy", json::Value::string(p));
		o.set("cycle_ms_p50_1k", json::Value::number(l1.p50));
		o.set("cycle_ms_p99_1k", json::Value::number(l1.p99));
		o.set("cycle_ms_p50_10k", json::Value::number(l10.p50));
		o.set("cycle_ms_p99_10k", json::Value::number(l10.p99));
		o.set("cycle_cpu_ms_p50_1k", json::Value::number(l1.cpu_p50));
		o.set("cycle_cpu_ms_p99_1k", json::Value::number(l1.cpu_p99));
		o.set("cycle_cpu_ms_p50_10k", json::Value::number(l10.cpu_p50));
		o.set("cycle_cpu_ms_p99_10k", json::Value::number(l10.cpu_p99));
		o.set("window_s", json::Value::number(throughput[0][0]));
		o.set("generated_jobs", json::Value::integer(static_cast<std::int64_t>(big)));
		o.set("generated_s", json::Value::number(throughput[1][0]));
		runs.push_back(o);
	}
	std::remove(path);
	std::printf("\n(window: %s on 64x8; generated: %zu Philly-like jobs at load 0.9 on 64x8)\n",
		    opt.window.c_str(), big);
	// On a shared machine the wall times above include waiting for a core; the deciding thread's
	// CPU time does not.
	std::printf("decision CPU time (the deciding thread's, without waits for a core):\n%s",
		    cpu_lines.c_str());
	if (!opt.json_path.empty()) {
		json::Value doc = json::Value::object();
		doc.set("bench", runs);
		std::ofstream out(opt.json_path);
		out << doc.dump() << "\n";
	}
	return status;
}

}  // namespace dlsched::sim
