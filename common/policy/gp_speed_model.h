// GpSpeedModel: what each node's GPUs really deliver for a model, learned from measured speeds with
// a Gaussian process: the placement agent's speed model of the dual-agent scheduler (Xing et al.,
// "A Dual-Agent Scheduler for Distributed Deep Learning Jobs on Public Cloud via Reinforcement
// Learning", KDD'23: a "random walk Gaussian process" over GPU machines, because machines of one
// type do not all run at their nominal speed, and a scheduler that trusts the nominal speed puts
// jobs on slow machines again and again).
//
// What is learned is the deviation from the catalog: y = log(measured speed / nominal speed), with
// the nominal speed the Gavel throughput of the node's GPU type for the model
// (ModelCatalog::gpu_speed). Prior mean 0 (the catalog is right until measured otherwise), so with no
// observations the model is exactly the catalog. The kernel is a product:
//
//   k((n, m), (n', m')) = signal_sd^2 x k_machine(n, n') x k_model(m, m')
//
// k_machine is the random-walk kernel of Smola and Kondor ("Kernels and Regularization on Graphs",
// COLT 2003), (a I - L)^p with L the normalised Laplacian, on the machine graph that links nodes of
// the same GPU type in the same partition (what a scheduler can see that machines share: a hardware
// generation, a purchase, a driver). A measurement on one machine then says something about its
// neighbours, less the bigger their group, and nothing about other types. That graph is a union of
// cliques, where (a I - L)^p has a closed form (walk_correlation()), so the kernel costs O(1) per
// entry however large the cluster.
//
// k_model = shared + (1 - shared) x exp(-d^2 / 2 length^2), d the RMS distance between two models'
// log Gavel speed vectors: part of a machine's deviation every model feels (a throttled GPU), part
// depends on what the model stresses, shared more between models that use the GPU types alike.
//
// Cost: fit() aggregates repeated (node, model) pairs (the same posterior as keeping them, with the
// noise variance divided by their count) and conditions on at most max_observations of the latest
// measurements. The kernel is 0 between groups, so the covariance is block diagonal: each group's
// block is factorised on its own, O(B^3 / 3) for B points. The product structure makes a query
// cheap: for node n of a group with correlation c, the covariance with the points is
// k* = c u_m + (1 - c) w, where u_m (the model's similarity to each point of the group) is shared by
// the group's nodes and w is non-zero only on n's own points (a handful: one per model). With
// A = K^-1, what u_m needs (u^T alpha, u^T A u, A u) is computed once per (group, model), and the
// rest from n's own few points and n's diagonal block of A: O(models^2) per (node, model).
#ifndef DLSCHED_POLICY_GP_SPEED_MODEL_H
#define DLSCHED_POLICY_GP_SPEED_MODEL_H

#include <cstddef>
#include <string>
#include <vector>

#include "model/cluster_view.h"

namespace dlsched {

struct GpSpeedParams {
	double signal_sd = 0.15;    // prior sd of log(actual / nominal): machines within ~15% of nominal
	double noise_sd = 0.05;     // sd of one measurement (log): timing noise, contention
	double walk_a = 3.0;        // random-walk kernel (a I - L)^p: a >= 2; a > 2 keeps two linked
	int walk_steps = 3;         // machines from being perfectly correlated
	double model_shared = 0.5;  // k_model's floor: the part of a deviation every model feels
	double model_length = 0.5;  // k_model's length scale on log-speed distance
	// Predicted speed = nominal x exp(mean + exploration x sd): an upper confidence bound, so that a
	// machine nobody has measured yet is tried before one measured as merely average. 0.5 lowered
	// the average JCT by 0.5-1% against 0 on three Philly 1,000-job windows on hetero-32x8 (4 seeds
	// each): a small bonus; the machines fill up and get measured anyway.
	double exploration = 0.5;
	std::size_t max_observations = 256;  // the latest ones; bounds fit() at O(max^3 / 3)
};

// The posterior of y = log(actual speed / nominal speed).
struct SpeedPosterior {
	double mean = 0;
	double sd = 0;
};

class GpSpeedModel {
public:
	explicit GpSpeedModel(const GpSpeedParams& params = GpSpeedParams()) : p_(params) {}

	// Conditions the process on the view's latest observations. Keeps a pointer to the view's
	// catalog: the queries below are valid while it lives.
	void fit(const ClusterView& view);

	// Posterior of log(actual / nominal) for `model` (-1: unknown) on `node`; cached until fit().
	SpeedPosterior posterior(NodeIndex node, int model);
	// The catalog's speed of the node's GPU type for the model (1 when either is unknown).
	double nominal(NodeIndex node, int model);
	// nominal x exp(mean + exploration x sd): the speed a placement ranks by; cached.
	double predicted_speed(NodeIndex node, int model);

	// Distinct (node, model) pairs the last fit() conditioned on.
	std::size_t points() const { return points_.size(); }
	// The kernels, normalised to 1 on the diagonal (exposed for tests).
	double machine_kernel(NodeIndex a, NodeIndex b) const;
	double model_kernel(int a, int b) const;
	// Correlation of two nodes of one clique of `group_size` nodes under (a I - L)^p.
	static double walk_correlation(int group_size, double a, int p);

private:
	struct Point {
		NodeIndex node;
		int model;  // model slot (see slot())
		double y;   // mean of the observations' log ratios
		int count;
	};
	// One group's points: [begin, begin + size) of points_, and its part of the factorisation.
	struct Block {
		std::size_t begin = 0, size = 0;
		// X = L^-1 for the block's K + noise = L L^T, stored by columns (row j of inv_lt is column j
		// of X, non-zero from j on), so that what queries read of it is contiguous.
		std::vector<double> inv_lt;
	};
	// What a (group, model) query needs of u_m, the model's covariance with the group's points.
	struct GroupModel {
		bool set = false;
		double u_alpha = 0;     // u^T alpha
		double u_a_u = 0;       // u^T A u
		std::vector<double> z;  // A u
	};
	struct Cached {
		double mean, sd, speed;
		bool set;
	};

	int slot(int model) const { return model >= 0 && model < n_models_ ? model : n_models_; }
	std::size_t slots() const { return static_cast<std::size_t>(n_models_) + 1; }
	double model_k(int a, int b) const
	{
		return model_kernel_[static_cast<std::size_t>(a) * slots() + static_cast<std::size_t>(b)];
	}
	bool factorise();
	GroupModel& group_model(int group, int s);
	Cached& cached(NodeIndex node, int s);

	GpSpeedParams p_;
	const ModelCatalog* models_ = nullptr;
	int n_models_ = 0;                // catalog size; slot n_models_ is "unknown model"
	std::vector<int> group_of_;       // per node: its GPU-type-and-partition group
	std::vector<double> group_corr_;  // per group: walk_correlation of its size
	std::vector<std::string> group_type_;
	std::vector<double> model_kernel_;               // slots^2
	std::vector<double> nominal_;                    // groups x slots; < 0: not computed yet
	std::vector<Point> points_;                      // sorted by (group, node, model)
	std::vector<Block> blocks_;                      // per group
	std::vector<double> alpha_;                      // (K + noise)^-1 y, per point
	std::vector<int> node_slot_;                     // per node: index of its own points' range, or -1
	std::vector<std::size_t> own_begin_, own_size_;  // per observed node: its points in points_
	std::vector<std::vector<double>> own_a_;         // per observed node: its diagonal block of A
	std::vector<GroupModel> group_models_;           // groups x slots
	std::vector<Cached> observed_cache_;             // observed nodes x slots
	std::vector<Cached> group_cache_;                // groups x slots (nodes with no observation)
	std::vector<double> scratch_;
};

}  // namespace dlsched

#endif
