// Measured epochs as speed observations (model/speed_samples.h): the steady epoch of a run, and the
// per-GPU speed relative to one reference GPU that dlsched-sim feeds gp-placement, on hand-computed
// cases.
#include <check.h>

#include <cmath>
#include <string>
#include <vector>

#include "check_main.h"

#include "model/speed_samples.h"
#include "view_builder.h"

using namespace dlsched;
using namespace dlsched::test;

namespace {

constexpr double kTol = 1e-9;

// Two V100 nodes (n0, n1) and two K80s (n2, n3); "resnet" runs at a quarter of a V100's speed on a
// K80 and scales linearly.
struct Hetero {
	World w{{2, 2, 2, 2}};
	Hetero()
	{
		w.nodes[0].gpu_type = w.nodes[1].gpu_type = "v100";
		w.nodes[2].gpu_type = w.nodes[3].gpu_type = "k80";
		ModelProfile p;
		p.name = "resnet";
		p.points = {{1, 1, 1}, {2, 1, 2}, {4, 1, 4}};
		p.gpu_speed = {{"v100", 1.0}, {"k80", 0.25}};
		resnet = w.models.add(p);
	}
	Span<const Node> nodes() const { return Span<const Node>(w.nodes.data(), w.nodes.size()); }
	int resnet = -1;
};

EpochSample run(NodeIndex node, const std::string& model, int gpus, double epoch_s, Seconds at, int nodes = 1)
{
	EpochSample s;
	s.node = node;
	s.model = model;
	s.gpus = gpus;
	s.nodes = nodes;
	s.epoch_s = epoch_s;
	s.at = at;
	return s;
}

}  // namespace

START_TEST(steady_epoch_is_the_median_after_the_warm_up)
{
	const struct {
		std::vector<double> epochs;
		double steady;
	} cases[] = {
		{{30, 10, 12, 11}, 11},  // the first (warm-up) left out; median of 10, 11, 12
		{{30, 10, 12}, 11},      // an even count: the mean of the middle two
		{{30, 10}, 10},
		{{30}, 0},  // the warm-up alone: no steady epoch yet
		{{}, 0},
		{{30, 10, -1}, 0},  // not a length
		{{30, 10, NAN}, 0},
	};
	for (const auto& c : cases)
		ck_assert_double_eq_tol(steady_epoch_seconds(c.epochs), c.steady, kTol);
}
END_TEST

// Per-GPU epoch times on one GPU of each node: n0 40 s, n1 10 s (5 s on 2 GPUs), n2 and n3 40 s.
// Converted to a V100 by the catalog (K80: x 0.25): n0 40, n1 10, n2 10, n3 10; the model's
// reference is the median node, 10 s. So n1 and the K80s are at their type's speed (1 and 0.25),
// and n0, a V100, runs at a K80's: 10 / 40 = 0.25.
START_TEST(speeds_are_relative_to_the_median_node)
{
	Hetero h;
	std::vector<EpochSample> samples = {
		run(0, "resnet", 1, 40, 4), run(1, "resnet", 2, 5, 3), run(2, "resnet", 1, 40, 2),
		run(3, "resnet", 1, 40, 1), run(0, "resnet", 2, 1, 7, 2),  // over 2 nodes: its slowest
									   // node's time, which is unknown
		run(9, "resnet", 1, 1, 8),                                 // no such node
		run(1, "lonely", 1, 10, 9),   // a model one node ran: nothing to compare with
		run(0, "mystery", 1, 10, 5),  // not in the catalog: nominal 1 everywhere, linear
		run(1, "mystery", 1, 20, 6),  // reference sqrt(10 x 20)
		run(2, "resnet", 0, 40, 10),  // no GPUs
		run(3, "resnet", 1, 0, 11),   // no epoch time
	};
	const std::vector<SpeedObservation> obs = speed_observations(samples, h.nodes(), h.w.models);
	const struct {
		NodeIndex node;
		int model;
		double speed;
		Seconds at;
	} want[] = {
		{3, h.resnet, 0.25, 1},
		{2, h.resnet, 0.25, 2},
		{1, h.resnet, 1.0, 3},
		{0, h.resnet, 0.25, 4},
		{0, -1, std::sqrt(200.0) / 10, 5},
		{1, -1, std::sqrt(200.0) / 20, 6},
	};
	ck_assert_uint_eq(obs.size(), sizeof want / sizeof want[0]);
	for (std::size_t i = 0; i < obs.size(); ++i) {
		ck_assert_uint_eq(obs[i].node, want[i].node);
		ck_assert_int_eq(obs[i].model, want[i].model);
		ck_assert_double_eq_tol(obs[i].speed, want[i].speed, kTol);
		ck_assert_double_eq(obs[i].at, want[i].at);
	}
}
END_TEST

// What a reference GPU takes for an epoch is the cluster's own: the same runs 50 times shorter (an
// emulated cluster's compressed time, a smaller dataset) are the same speeds.
START_TEST(speeds_do_not_depend_on_the_epoch_length)
{
	Hetero h;
	std::vector<EpochSample> slow = {run(0, "resnet", 1, 40, 1), run(1, "resnet", 1, 10, 2),
					 run(2, "resnet", 1, 40, 3)};
	std::vector<EpochSample> fast = slow;
	for (EpochSample& s : fast)
		s.epoch_s /= 50;
	const auto a = speed_observations(slow, h.nodes(), h.w.models);
	const auto b = speed_observations(fast, h.nodes(), h.w.models);
	ck_assert_uint_eq(a.size(), 3);
	ck_assert_uint_eq(b.size(), 3);
	for (std::size_t i = 0; i < a.size(); ++i)
		ck_assert_double_eq_tol(a[i].speed, b[i].speed, kTol);
	// Three nodes: the median node is n1 or n2 (both 10 s on a V100): n0 is at a quarter.
	ck_assert_double_eq_tol(a[0].speed, 0.25, kTol);
	ck_assert_double_eq_tol(a[1].speed, 1.0, kTol);
	ck_assert_double_eq_tol(a[2].speed, 0.25, kTol);
	// One node's runs, however many, teach nothing.
	std::vector<EpochSample> one = {run(0, "resnet", 1, 40, 1), run(0, "resnet", 1, 41, 2)};
	ck_assert(speed_observations(one, h.nodes(), h.w.models).empty());
}
END_TEST

int main()
{
	Suite* s = suite_create("speed_samples");
	TCase* tc = tcase_create("speed_samples");
	tcase_add_test(tc, steady_epoch_is_the_median_after_the_warm_up);
	tcase_add_test(tc, speeds_are_relative_to_the_median_node);
	tcase_add_test(tc, speeds_do_not_depend_on_the_epoch_length);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
