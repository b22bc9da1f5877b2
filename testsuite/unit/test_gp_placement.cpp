// gp-placement and its Gaussian-process speed model: the posterior on cases small enough to compute
// by hand, the structured solver against a plain dense GP, and placements that say why they are right.
#include <check.h>

#include <cmath>

#include "check_main.h"

#include "policy/builtin_policies.h"
#include "policy/gp_speed_model.h"
#include "util/random.h"
#include "view_builder.h"

using namespace dlsched;
using namespace dlsched::test;

namespace {

constexpr double kTol = 1e-9;

// A model that runs at a quarter of the reference speed on a K80 (and linearly on one node).
int add_resnet(World& w)
{
	ModelProfile p;
	p.name = "resnet";
	p.points = {{1, 1, 1}, {2, 1, 2}, {4, 1, 4}, {8, 1, 8}};
	p.gpu_speed = {{"v100", 1.0}, {"k80", 0.25}, {"p100", 0.5}};
	return w.models.add(p);
}

// A view of `w` with `obs` as its measurements.
ClusterView with_observations(const World& w, const std::vector<SpeedObservation>& obs,
			      std::uint64_t cycle = 1)
{
	ClusterView v = w.view();
	v.cycle = cycle;
	v.observations = Span<const SpeedObservation>(obs.data(), obs.size());
	return v;
}

std::unique_ptr<Scheduler> make(const std::string& preset)
{
	Config c;
	ck_assert(c.set("Policy", preset, "test").is_ok());
	PolicyRegistry r;
	register_builtin_policies(r);
	auto s = Scheduler::create(c, r);
	ck_assert_msg(s.is_ok(), "%s", s.status().message().c_str());
	return std::move(s).value();
}

// Solves a x = b by Gaussian elimination with partial pivoting (n small).
std::vector<double> dense_solve(std::vector<double> a, std::vector<double> b)
{
	const std::size_t n = b.size();
	for (std::size_t c = 0; c < n; ++c) {
		std::size_t p = c;
		for (std::size_t r = c + 1; r < n; ++r)
			if (std::fabs(a[r * n + c]) > std::fabs(a[p * n + c]))
				p = r;
		for (std::size_t k = 0; k < n; ++k)
			std::swap(a[c * n + k], a[p * n + k]);
		std::swap(b[c], b[p]);
		for (std::size_t r = c + 1; r < n; ++r) {
			const double f = a[r * n + c] / a[c * n + c];
			for (std::size_t k = c; k < n; ++k)
				a[r * n + k] -= f * a[c * n + k];
			b[r] -= f * b[c];
		}
	}
	std::vector<double> x(n);
	for (std::size_t r = n; r-- > 0;) {
		double t = b[r];
		for (std::size_t k = r + 1; k < n; ++k)
			t -= a[r * n + k] * x[k];
		x[r] = t / a[r * n + r];
	}
	return x;
}

// Compares a rendering with what is wanted (the rendering kept alive for the message).
void expect(const Decisions& d, const char* want)
{
	const std::string got = render(d);
	ck_assert_msg(got == want, "got \"%s\", want \"%s\"", got.c_str(), want);
}

}  // namespace

START_TEST(random_walk_kernel_on_a_clique)
{
	// (a I - L)^p on a clique of m nodes: correlation (a^p - b^p) / (a^p + (m - 1) b^p), b = a - m/(m-1).
	// a = 3, p = 3. m = 2: b = 1, (27 - 1) / (27 + 1). m = 4: b = 5/3, b^3 = 125/27:
	// (729 - 125) / (729 + 375) = 604 / 1104. A lone node has nobody to correlate with: 1.
	ck_assert_double_eq_tol(GpSpeedModel::walk_correlation(2, 3, 3), 26.0 / 28.0, kTol);
	ck_assert_double_eq_tol(GpSpeedModel::walk_correlation(4, 3, 3), 604.0 / 1104.0, kTol);
	ck_assert_double_eq_tol(GpSpeedModel::walk_correlation(1, 3, 3), 1.0, kTol);
	// Bigger groups: a measurement says less about each other member.
	ck_assert(GpSpeedModel::walk_correlation(32, 3, 3) < GpSpeedModel::walk_correlation(8, 3, 3));
}
END_TEST

START_TEST(one_observation_moves_its_node_and_partly_its_neighbour)
{
	// n0, n1: V100s (one clique of 2); n2: a K80 (alone). The world's models have no GPU-type speeds,
	// so every nominal speed is 1 and k_model is 1. One measurement: n0 at 1.1, y = log 1.1.
	World w({4, 4, 4});
	w.nodes[0].gpu_type = w.nodes[1].gpu_type = "v100";
	w.nodes[2].gpu_type = "k80";
	std::vector<SpeedObservation> obs = {{0, w.linear, 1.1, 10}};
	GpSpeedParams p;  // signal sd 0.15, noise sd 0.05: s = 0.0225, n = 0.0025, s / (s + n) = 0.9
	GpSpeedModel gp(p);
	gp.fit(with_observations(w, obs));
	ck_assert_int_eq(static_cast<int>(gp.points()), 1);
	const double y = std::log(1.1), s = 0.0225, n = 0.0025, c = 26.0 / 28.0;
	// The observed node: mean s / (s + n) y, variance s n / (s + n).
	SpeedPosterior at0 = gp.posterior(0, w.linear);
	ck_assert_double_eq_tol(at0.mean, 0.9 * y, kTol);
	ck_assert_double_eq_tol(at0.sd, std::sqrt(s * n / (s + n)), kTol);
	ck_assert(at0.sd < p.signal_sd);
	// Its linked neighbour moves partly: covariance c s, mean c s / (s + n) y, variance s - (c s)^2 / (s
	// + n).
	SpeedPosterior at1 = gp.posterior(1, w.linear);
	ck_assert_double_eq_tol(at1.mean, c * 0.9 * y, kTol);
	ck_assert_double_eq_tol(at1.sd, std::sqrt(s - c * c * s * s / (s + n)), kTol);
	ck_assert(at1.mean > 0 && at1.mean < at0.mean && at1.sd > at0.sd && at1.sd < p.signal_sd);
	// The K80 is not linked to the V100s: the prior, mean 0 and sd 0.15.
	SpeedPosterior at2 = gp.posterior(2, w.linear);
	ck_assert_double_eq_tol(at2.mean, 0.0, kTol);
	ck_assert_double_eq_tol(at2.sd, p.signal_sd, kTol);
	// Predicted speed: nominal (1) x exp(mean + 0.5 sd).
	ck_assert_double_eq_tol(gp.predicted_speed(0, w.linear), std::exp(0.9 * y + 0.5 * at0.sd), kTol);
	// Two measurements of the same pair are one of their mean with half the noise variance:
	// n0 at 1.1 and 1.1 again -> mean s / (s + n/2) y.
	obs.push_back({0, w.linear, 1.1, 20});
	gp.fit(with_observations(w, obs));
	ck_assert_int_eq(static_cast<int>(gp.points()), 1);
	ck_assert_double_eq_tol(gp.posterior(0, w.linear).mean, s / (s + n / 2) * y, kTol);
}
END_TEST

START_TEST(no_observations_is_the_catalog)
{
	World w({4, 4});
	const int resnet = add_resnet(w);
	w.nodes[0].gpu_type = "k80";
	w.nodes[1].gpu_type = "v100";
	GpSpeedModel gp;
	gp.fit(w.view());
	ck_assert_int_eq(static_cast<int>(gp.points()), 0);
	for (NodeIndex n = 0; n < 2; ++n) {
		ck_assert_double_eq_tol(gp.posterior(n, resnet).mean, 0.0, kTol);
		ck_assert_double_eq_tol(gp.posterior(n, resnet).sd, 0.15, kTol);
	}
	ck_assert_double_eq_tol(gp.nominal(0, resnet), 0.25, kTol);
	ck_assert_double_eq_tol(gp.nominal(1, resnet), 1.0, kTol);
	ck_assert_double_eq_tol(gp.nominal(0, -1), 1.0, kTol);  // unknown model: the reference speed
}
END_TEST

START_TEST(structured_posterior_equals_a_dense_gp)
{
	// 3 V100s, 2 K80s, 1 P100 (three cliques), two models, 40 measurements (seeded), some repeated:
	// the blocked, merged, structured solver must give the posterior of the plain GP on every raw
	// observation, computed here with the model's own kernels and Gaussian elimination.
	World w({8, 8, 8, 8, 8, 8});
	const int resnet = add_resnet(w);
	const char* types[] = {"v100", "v100", "k80", "v100", "k80", "p100"};
	for (std::size_t i = 0; i < 6; ++i)
		w.nodes[i].gpu_type = types[i];
	Rng rng(5, 0);
	std::vector<SpeedObservation> obs;
	for (int k = 0; k < 40; ++k) {
		SpeedObservation o;
		o.node = static_cast<NodeIndex>(rng.below(5));  // never n5: its posterior is the prior's
		o.model = rng.below(3) == 0 ? w.linear : resnet;
		o.speed = (o.model == resnet && w.nodes[o.node].gpu_type == "k80" ? 0.25 : 1.0) *
			  std::exp(0.1 * rng.normal());
		o.at = k;
		obs.push_back(o);
	}
	GpSpeedParams p;
	p.max_observations = 32;  // the latest 32 only
	GpSpeedModel gp(p);
	gp.fit(with_observations(w, obs));
	const std::size_t first = obs.size() - p.max_observations, m = p.max_observations;
	const double sf2 = p.signal_sd * p.signal_sd, sn2 = p.noise_sd * p.noise_sd;
	auto k = [&](NodeIndex a, int ma, NodeIndex b, int mb) {
		return sf2 * gp.machine_kernel(a, b) * gp.model_kernel(ma, mb);
	};
	std::vector<double> kk(m * m), y(m);
	for (std::size_t i = 0; i < m; ++i) {
		const SpeedObservation& oi = obs[first + i];
		y[i] = std::log(oi.speed / gp.nominal(oi.node, oi.model));
		for (std::size_t j = 0; j < m; ++j)
			kk[i * m + j] = k(oi.node, oi.model, obs[first + j].node, obs[first + j].model) +
					(i == j ? sn2 : 0);
	}
	const std::vector<double> alpha = dense_solve(kk, y);
	for (NodeIndex n = 0; n < 6; ++n)
		for (int model : {w.linear, resnet, -1}) {
			std::vector<double> ks(m);
			double mean = 0;
			for (std::size_t i = 0; i < m; ++i) {
				ks[i] = k(n, model, obs[first + i].node, obs[first + i].model);
				mean += ks[i] * alpha[i];
			}
			const std::vector<double> v = dense_solve(kk, ks);
			double var = sf2;
			for (std::size_t i = 0; i < m; ++i)
				var -= ks[i] * v[i];
			const SpeedPosterior got = gp.posterior(n, model);
			ck_assert_msg(std::fabs(got.mean - mean) < 1e-9,
				      "node %u model %d: mean %.12f, dense %.12f", n, model, got.mean, mean);
			ck_assert_msg(std::fabs(got.sd - std::sqrt(var)) < 1e-9,
				      "node %u model %d: sd %.12f, dense %.12f", n, model, got.sd,
				      std::sqrt(var));
		}
	// The models' kernel: 1 on the diagonal, in (0.5, 1) between the K80-shy resnet and the linear
	// model that runs the same everywhere.
	ck_assert_double_eq_tol(gp.model_kernel(resnet, resnet), 1.0, kTol);
	ck_assert(gp.model_kernel(resnet, w.linear) > 0.5 && gp.model_kernel(resnet, w.linear) < 1.0);
}
END_TEST

START_TEST(places_on_the_fastest_type)
{
	// A K80 node first, a V100 node second, both empty. pack best-fits by free GPUs (equal: lowest
	// index, the K80); gp-placement takes the V100, four times faster for resnet.
	World w({4, 4});
	const int resnet = add_resnet(w);
	w.nodes[0].gpu_type = "k80";
	w.nodes[1].gpu_type = "v100";
	w.pending(1, 0, 2).model = resnet;
	expect_decisions(w, "srtf", "start 1 [0:2]");
	expect_decisions(w, "srtf-gp", "start 1 [1:2]");
	// The linear model has no type speeds: every node is as fast, and gp-placement best-fits as pack.
	World lin({4, 2});
	lin.nodes[0].gpu_type = "k80";
	lin.nodes[1].gpu_type = "v100";
	lin.pending(1, 0, 2);
	expect_decisions(lin, "srtf", "start 1 [1:2]");
	expect_decisions(lin, "srtf-gp", "start 1 [1:2]");
}
END_TEST

START_TEST(places_away_from_a_node_measured_slow)
{
	// Two V100 nodes, equally free. With no measurement, best fit then index: n0. Once n0 has been
	// measured at 0.8 of its nominal speed, n1 (unmeasured: its posterior moves only by the clique
	// correlation, to a higher value than n0's) is the faster prediction.
	World w({4, 4});
	w.nodes[0].gpu_type = w.nodes[1].gpu_type = "v100";
	w.pending(1, 0, 1);
	std::vector<SpeedObservation> none;
	std::vector<SpeedObservation> slow = {{0, w.linear, 0.8, 0}, {0, w.linear, 0.8, 1}};
	auto s = make("srtf-gp");
	expect(s->decide(with_observations(w, none, 1)), "start 1 [0:1]");
	expect(s->decide(with_observations(w, slow, 2)), "start 1 [1:1]");
	// ... and the other way round when n0 was measured fast.
	std::vector<SpeedObservation> fast = {{1, w.linear, 0.8, 0}, {0, w.linear, 1.2, 1}};
	expect(s->decide(with_observations(w, fast, 3)), "start 1 [0:1]");
}
END_TEST

START_TEST(waits_for_a_faster_node_when_that_finishes_sooner)
{
	// n0: a V100 with all 4 GPUs busy for 60 s more at reference speed (job 9: 1 epoch of 240 s on
	// one GPU, 4 GPUs, linear scaling), 55.6 s at its predicted speed (x exp(0.5 x 0.15) = 1.078).
	// n1: a K80, free; resnet runs there at 0.25 (0.27 predicted).
	World w({4, 4});
	const int resnet = add_resnet(w);
	w.nodes[0].gpu_type = "v100";
	w.nodes[1].gpu_type = "k80";
	Job& busy = w.running(9, 0, {{0, 4}}, 1);
	busy.epoch_time_1gpu = 240;
	busy.model = resnet;
	// A long 4-GPU job: 100 epochs x 60 s / 4 = 1500 s at reference speed. On the K80 now: 5566 s;
	// after waiting for the V100: 55.6 + 1391 s. It waits (stays pending under a non-preemptive
	// order: fifo + rigid-strict + gp-placement).
	Job& job = w.pending(1, 1, 4, 100);
	job.model = resnet;
	Config c;
	ck_assert(c.set("Policy", "fifo", "test").is_ok());
	ck_assert(c.set("PlacementPolicy", "gp-placement", "test").is_ok());
	PolicyRegistry r;
	register_builtin_policies(r);
	auto s = Scheduler::create(c, r);
	ck_assert(s.is_ok());
	expect((*s)->decide(w.view()), "prio 1=1");
	// A 1-epoch job (15 s at reference speed): 55.7 s on the K80 now beats 55.6 + 13.9 s later.
	job.epochs_total = 1;
	expect((*s)->decide(w.view()), "start 1 [1:4]");
	// A job of unknown length (no epoch time) never waits.
	job.epochs_total = 100;
	job.epoch_time_1gpu = 0;
	expect((*s)->decide(w.view()), "start 1 [1:4]");
}
END_TEST

START_TEST(multi_node_jobs_take_the_fastest_nodes_that_hold_them)
{
	// 4-GPU nodes: K80, V100, P100, V100. An 8-GPU resnet job needs two nodes; it runs at its
	// slowest: the two V100s (n1, n3).
	World w({4, 4, 4, 4});
	const int resnet = add_resnet(w);
	const char* types[] = {"k80", "v100", "p100", "v100"};
	for (std::size_t i = 0; i < 4; ++i)
		w.nodes[i].gpu_type = types[i];
	w.pending(1, 0, 8).model = resnet;
	expect_decisions(w, "srtf-gp", "start 1 [1:4,3:4]");
	// With a V100 half busy, 8 GPUs need three nodes among the fast ones (4 + 2 on V100s, then the
	// P100) or two full ones (V100 + P100): the same slowest GPU, fewer nodes win.
	World h({4, 4, 4, 4});
	add_resnet(h);
	for (std::size_t i = 0; i < 4; ++i)
		h.nodes[i].gpu_type = types[i];
	h.running(9, 0, {{1, 2}}, 1000);
	h.pending(1, 1, 8).model = h.models.find("resnet");
	expect_decisions(h, "fifo", "start 1 [3:4,2:4]", {{"PlacementPolicy", "gp-placement"}});
}
END_TEST

START_TEST(gp_placement_is_deterministic)
{
	// Mixed types, measurements, jobs added in opposite orders: the same decisions, twice, and from
	// a fresh scheduler.
	auto build = [](World& world, bool reverse) {
		const int resnet = add_resnet(world);
		const char* types[] = {"k80", "v100", "p100", "v100", "k80", "v100"};
		for (std::size_t i = 0; i < world.nodes.size(); ++i)
			world.nodes[i].gpu_type = types[i % 6];
		for (JobId k = 1; k <= 30; ++k) {
			const JobId id = reverse ? 31 - k : k;
			Job& j = world.pending(id, static_cast<double>(id % 5), 1 + static_cast<int>(id % 3),
					       1 + id % 7);
			j.model = id % 2 ? resnet : world.linear;
		}
	};
	World a({8, 8, 8, 8, 8, 8}), b({8, 8, 8, 8, 8, 8});
	build(a, false);
	build(b, true);
	std::vector<SpeedObservation> obs;
	Rng rng(3, 0);
	for (int k = 0; k < 50; ++k)
		obs.push_back({static_cast<NodeIndex>(rng.below(6)), static_cast<int>(rng.below(2)),
			       std::exp(0.1 * rng.normal()), static_cast<double>(k)});
	auto s = make("srtf-gp");
	const std::string first = render(s->decide(with_observations(a, obs, 1)));
	const std::string again = render(s->decide(with_observations(a, obs, 2)));
	const std::string fresh = render(make("srtf-gp")->decide(with_observations(b, obs, 1)));
	ck_assert_msg(first == again, "not deterministic: %s vs %s", first.c_str(), again.c_str());
	ck_assert_msg(first == fresh, "depends on job order: %s vs %s", first.c_str(), fresh.c_str());
	ck_assert(first.find("start") != std::string::npos);
}
END_TEST

int main()
{
	Suite* s = suite_create("gp-placement");
	TCase* tc = tcase_create("gp");
	tcase_add_test(tc, random_walk_kernel_on_a_clique);
	tcase_add_test(tc, one_observation_moves_its_node_and_partly_its_neighbour);
	tcase_add_test(tc, no_observations_is_the_catalog);
	tcase_add_test(tc, structured_posterior_equals_a_dense_gp);
	tcase_add_test(tc, places_on_the_fastest_type);
	tcase_add_test(tc, places_away_from_a_node_measured_slow);
	tcase_add_test(tc, waits_for_a_faster_node_when_that_finishes_sooner);
	tcase_add_test(tc, multi_node_jobs_take_the_fastest_nodes_that_hold_them);
	tcase_add_test(tc, gp_placement_is_deterministic);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
