#include "policy/gp_speed_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "model/partition_list.h"

namespace dlsched {

namespace {

// sum of a[k] b[k] for k < n, in four interleaved partial sums: the additions of one sum wait on each
// other, four independent ones keep the floating-point unit busy (the fit's inner loop). The order
// is fixed, so the result is the same on every run.
double dot(const double* a, const double* b, std::size_t n)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	std::size_t k = 0;
	for (; k + 4 <= n; k += 4) {
		s0 += a[k] * b[k];
		s1 += a[k + 1] * b[k + 1];
		s2 += a[k + 2] * b[k + 2];
		s3 += a[k + 3] * b[k + 3];
	}
	for (; k < n; ++k)
		s0 += a[k] * b[k];
	return (s0 + s1) + (s2 + s3);
}

// In-place Cholesky factorisation of the symmetric positive definite n x n matrix `a` (row-major;
// only the lower triangle is read): a = L L^T, L left in the lower triangle. Rows are contiguous,
// so the inner products run over memory in order. False when `a` is not positive definite.
bool cholesky(std::vector<double>& a, std::size_t n)
{
	for (std::size_t j = 0; j < n; ++j) {
		double* row_j = &a[j * n];
		const double s = row_j[j] - dot(row_j, row_j, j);
		if (!(s > 0))
			return false;
		const double d = std::sqrt(s), inv_d = 1.0 / d;
		row_j[j] = d;
		for (std::size_t i = j + 1; i < n; ++i) {
			double* row_i = &a[i * n];
			row_i[j] = (row_i[j] - dot(row_i, row_j, j)) * inv_d;
		}
	}
	return true;
}

// Solves L z = b in place (L lower triangular, row-major n x n).
void forward_solve(const std::vector<double>& l, std::size_t n, std::vector<double>& b)
{
	for (std::size_t i = 0; i < n; ++i)
		b[i] = (b[i] - dot(&l[i * n], b.data(), i)) / l[i * n + i];
}

// Solves L^T x = b in place.
void backward_solve(const std::vector<double>& l, std::size_t n, std::vector<double>& b)
{
	for (std::size_t i = n; i-- > 0;) {
		double t = b[i];
		for (std::size_t k = i + 1; k < n; ++k)
			t -= l[k * n + i] * b[k];
		b[i] = t / l[i * n + i];
	}
}

}  // namespace

double GpSpeedModel::walk_correlation(int group_size, double a, int p)
{
	// On a clique of m nodes (degree m - 1) the normalised Laplacian is L = m/(m-1) I - J/(m-1): it is
	// 0 on the constant vector and m/(m-1) on its complement. So (a I - L)^p = a^p J/m +
	// b^p (I - J/m) with b = a - m/(m-1): diagonal (a^p + (m-1) b^p)/m, off-diagonal (a^p - b^p)/m.
	if (group_size <= 1)
		return 1.0;
	const double m = group_size;
	a = std::max(a, 2.0);
	const double b = a - m / (m - 1);
	const double ap = std::pow(a, p), bp = std::pow(b, p);
	return (ap - bp) / (ap + (m - 1) * bp);
}

double GpSpeedModel::machine_kernel(NodeIndex a, NodeIndex b) const
{
	if (a == b)
		return 1.0;
	if (a >= group_of_.size() || b >= group_of_.size() || group_of_[a] != group_of_[b])
		return 0.0;
	return group_corr_[static_cast<std::size_t>(group_of_[a])];
}

double GpSpeedModel::model_kernel(int a, int b) const
{
	return model_kernel_.empty() ? 1.0 : model_k(slot(a), slot(b));
}

void GpSpeedModel::fit(const ClusterView& view)
{
	const Span<const Node> nodes = view.nodes;
	models_ = view.models;
	n_models_ = models_ ? models_->size() : 0;
	const std::size_t ns = slots();
	const std::size_t n = nodes.size();

	// The machine graph: one clique per (GPU type, partition), numbered in node order (a node in
	// several partitions by its first, as before they were listed).
	std::map<std::pair<std::string, std::string>, int> groups;
	std::vector<int> sizes;
	group_of_.assign(n, 0);
	group_type_.clear();
	for (std::size_t i = 0; i < n; ++i) {
		const Node& node = nodes[i];
		const std::string part(first_partition(node.partition));
		const int next = static_cast<int>(sizes.size());
		auto it = groups.emplace(std::make_pair(node.gpu_type, part), next).first;
		if (it->second == next) {
			sizes.push_back(0);
			group_type_.push_back(node.gpu_type);
		}
		group_of_[i] = it->second;
		++sizes[static_cast<std::size_t>(it->second)];
	}
	const std::size_t n_groups = sizes.size();
	group_corr_.clear();
	for (int m : sizes)
		group_corr_.push_back(walk_correlation(m, p_.walk_a, p_.walk_steps));
	nominal_.assign(n_groups * ns, -1.0);

	// k_model from the models' log Gavel speed vectors; the unknown model's vector is all zeros.
	model_kernel_.assign(ns * ns, 1.0);
	if (models_) {
		const std::vector<std::string> types = models_->gpu_types();
		std::vector<std::vector<double>> v(ns, std::vector<double>(types.size(), 0.0));
		for (int m = 0; m < n_models_; ++m)
			for (std::size_t t = 0; t < types.size(); ++t)
				v[static_cast<std::size_t>(m)][t] =
					std::log(std::max(models_->gpu_speed(m, types[t]), 1e-9));
		const double two_l2 = 2 * p_.model_length * p_.model_length;
		for (std::size_t a = 0; a < ns; ++a)
			for (std::size_t b = 0; b < ns; ++b) {
				double d2 = 0;
				for (std::size_t t = 0; t < types.size(); ++t)
					d2 += (v[a][t] - v[b][t]) * (v[a][t] - v[b][t]);
				if (!types.empty())
					d2 /= static_cast<double>(types.size());
				model_kernel_[a * ns + b] =
					p_.model_shared + (1 - p_.model_shared) * std::exp(-d2 / two_l2);
			}
	}

	// The latest observations, repeated (node, model) pairs merged: n measurements of one input with
	// noise variance s^2 are one measurement of their mean with variance s^2 / n.
	const std::size_t total = view.observations.size();
	const std::size_t first = total > p_.max_observations ? total - p_.max_observations : 0;
	std::map<std::tuple<int, NodeIndex, int>, std::pair<double, int>> merged;  // (group, node, slot)
	for (std::size_t k = first; k < total; ++k) {
		const SpeedObservation& o = view.observations[k];
		if (o.node >= n || !(o.speed > 0) || !std::isfinite(o.speed))
			continue;
		const int s = slot(o.model);
		auto& e = merged[std::make_tuple(group_of_[o.node], o.node, s)];
		e.first += std::log(o.speed / nominal(o.node, s == n_models_ ? -1 : s));
		e.second += 1;
	}
	points_.clear();
	blocks_.assign(n_groups, Block());
	for (const auto& kv : merged) {
		Block& b = blocks_[static_cast<std::size_t>(std::get<0>(kv.first))];
		if (b.size == 0)
			b.begin = points_.size();
		++b.size;
		points_.push_back({std::get<1>(kv.first), std::get<2>(kv.first),
				   kv.second.first / kv.second.second, kv.second.second});
	}
	if (!factorise()) {
		// Cannot happen with noise_sd > 0 (K is a product of positive semi-definite kernels); if
		// rounding ever breaks it, condition on nothing rather than on garbage.
		points_.clear();
		blocks_.assign(n_groups, Block());
		alpha_.clear();
	}

	// Each observed node's own points (contiguous: sorted by group, then node) and its block of A.
	node_slot_.assign(n, -1);
	own_begin_.clear();
	own_size_.clear();
	own_a_.clear();
	for (std::size_t i = 0; i < points_.size(); ++i) {
		const NodeIndex node = points_[i].node;
		if (node_slot_[node] < 0) {
			node_slot_[node] = static_cast<int>(own_begin_.size());
			own_begin_.push_back(i);
			own_size_.push_back(0);
		}
		++own_size_.back();
	}
	for (std::size_t o = 0; o < own_begin_.size(); ++o) {
		const Block& b = blocks_[static_cast<std::size_t>(group_of_[points_[own_begin_[o]].node])];
		const std::size_t first_local = own_begin_[o] - b.begin, k = own_size_[o];
		// A = X^T X: A_ij = sum over r >= max(i, j) of X_ri X_rj, X's columns i and j from row i on.
		std::vector<double> a(k * k, 0.0);
		for (std::size_t i = 0; i < k; ++i)
			for (std::size_t j = 0; j <= i; ++j) {
				const std::size_t gi = first_local + i, gj = first_local + j;
				a[i * k + j] = a[j * k + i] = dot(&b.inv_lt[gi * b.size + gi],
								  &b.inv_lt[gj * b.size + gi], b.size - gi);
			}
		own_a_.push_back(std::move(a));
	}
	group_models_.assign(n_groups * ns, GroupModel());
	observed_cache_.assign(own_begin_.size() * ns, Cached{0, 0, 0, false});
	group_cache_.assign(n_groups * ns, Cached{0, 0, 0, false});
}

bool GpSpeedModel::factorise()
{
	const double sf2 = p_.signal_sd * p_.signal_sd, sn2 = p_.noise_sd * p_.noise_sd;
	alpha_.resize(points_.size());
	for (Block& b : blocks_) {
		const std::size_t m = b.size;
		const Point* pt = points_.data() + b.begin;
		const double c = m > 0 ? group_corr_[static_cast<std::size_t>(group_of_[pt[0].node])] : 0.0;
		std::vector<double> k(m * m, 0.0);
		for (std::size_t i = 0; i < m; ++i)
			for (std::size_t j = 0; j <= i; ++j)
				k[i * m + j] = sf2 * (pt[i].node == pt[j].node ? 1.0 : c) *
					       model_k(pt[i].model, pt[j].model);
		for (std::size_t i = 0; i < m; ++i)
			k[i * m + i] += sn2 / pt[i].count;
		if (!cholesky(k, m))
			return false;
		// X = L^-1 column by column: L x = e_j gives x_j = 1 / L_jj and, below it,
		// x_i = -(sum over j <= r < i of L_ir x_r) / L_ii (zero above j).
		std::vector<double> inv_diag(m);
		for (std::size_t i = 0; i < m; ++i)
			inv_diag[i] = 1.0 / k[i * m + i];
		b.inv_lt.assign(m * m, 0.0);
		for (std::size_t j = 0; j < m; ++j) {
			double* x = &b.inv_lt[j * m];
			x[j] = inv_diag[j];
			for (std::size_t i = j + 1; i < m; ++i)
				x[i] = -dot(&k[i * m + j], x + j, i - j) * inv_diag[i];
		}
		// alpha = L^-T L^-1 y.
		std::vector<double> y(m);
		for (std::size_t i = 0; i < m; ++i)
			y[i] = pt[i].y;
		forward_solve(k, m, y);
		backward_solve(k, m, y);
		std::copy(y.begin(), y.end(), alpha_.begin() + static_cast<std::ptrdiff_t>(b.begin));
	}
	return true;
}

double GpSpeedModel::nominal(NodeIndex node, int model)
{
	const int s = slot(model);
	if (s == n_models_ || node >= group_of_.size())
		return 1.0;
	const std::size_t g = static_cast<std::size_t>(group_of_[node]);
	double& v = nominal_[g * slots() + static_cast<std::size_t>(s)];
	if (v < 0) {
		v = models_->gpu_speed(s, group_type_[g]);
		if (!(v > 0) || !std::isfinite(v))
			v = 1.0;
	}
	return v;
}

GpSpeedModel::GroupModel& GpSpeedModel::group_model(int group, int s)
{
	GroupModel& gm =
		group_models_[static_cast<std::size_t>(group) * slots() + static_cast<std::size_t>(s)];
	if (gm.set)
		return gm;
	const Block& b = blocks_[static_cast<std::size_t>(group)];
	const double sf2 = p_.signal_sd * p_.signal_sd;
	// u: the model's covariance with each point of the group, before the machine kernel's factor.
	scratch_.assign(b.size, 0.0);
	gm.u_alpha = 0;
	for (std::size_t i = 0; i < b.size; ++i) {
		scratch_[i] = sf2 * model_k(s, points_[b.begin + i].model);
		gm.u_alpha += scratch_[i] * alpha_[b.begin + i];
	}
	// t = X u (the columns of X weighted by u); u^T A u = t^T t; A u = X^T t (column i of X from i on
	// against t).
	std::vector<double> t(b.size, 0.0);
	for (std::size_t r = 0; r < b.size; ++r) {
		const double* col = &b.inv_lt[r * b.size];
		const double ur = scratch_[r];
		for (std::size_t i = r; i < b.size; ++i)
			t[i] += col[i] * ur;
	}
	gm.u_a_u = dot(t.data(), t.data(), b.size);
	gm.z.assign(b.size, 0.0);
	for (std::size_t i = 0; i < b.size; ++i)
		gm.z[i] = dot(&b.inv_lt[i * b.size + i], &t[i], b.size - i);
	gm.set = true;
	return gm;
}

GpSpeedModel::Cached& GpSpeedModel::cached(NodeIndex node, int s)
{
	// k* = c u + (1 - c) w (see the header): nodes with no observation of their own have w = 0 and
	// share their group's posterior.
	const int own = node_slot_[node];
	const int g = group_of_[node];
	Cached& c =
		own >= 0 ? observed_cache_[static_cast<std::size_t>(own) * slots() +
					   static_cast<std::size_t>(s)]
			 : group_cache_[static_cast<std::size_t>(g) * slots() + static_cast<std::size_t>(s)];
	if (c.set)
		return c;
	const double sf2 = p_.signal_sd * p_.signal_sd;
	double mean = 0, var = sf2;
	const Block& b = blocks_[static_cast<std::size_t>(g)];
	if (b.size > 0) {
		const GroupModel& gm = group_model(g, s);
		const double corr = group_corr_[static_cast<std::size_t>(g)];
		mean = corr * gm.u_alpha;
		double quad = corr * corr * gm.u_a_u;
		if (own >= 0) {
			const std::size_t begin = own_begin_[static_cast<std::size_t>(own)];
			const std::size_t k = own_size_[static_cast<std::size_t>(own)];
			const std::vector<double>& a = own_a_[static_cast<std::size_t>(own)];
			double w_alpha = 0, w_z = 0, w_a_w = 0;
			scratch_.resize(k);
			for (std::size_t i = 0; i < k; ++i) {
				scratch_[i] = sf2 * model_k(s, points_[begin + i].model);
				w_alpha += scratch_[i] * alpha_[begin + i];
				w_z += scratch_[i] * gm.z[begin - b.begin + i];
			}
			for (std::size_t i = 0; i < k; ++i)
				for (std::size_t j = 0; j < k; ++j)
					w_a_w += scratch_[i] * a[i * k + j] * scratch_[j];
			mean += (1 - corr) * w_alpha;
			quad += 2 * corr * (1 - corr) * w_z + (1 - corr) * (1 - corr) * w_a_w;
		}
		var -= quad;
	}
	c.mean = mean;
	c.sd = std::sqrt(std::max(var, 0.0));
	c.speed = nominal(node, s == n_models_ ? -1 : s) * std::exp(c.mean + p_.exploration * c.sd);
	c.set = true;
	return c;
}

SpeedPosterior GpSpeedModel::posterior(NodeIndex node, int model)
{
	if (node >= node_slot_.size())
		return {0.0, p_.signal_sd};
	const Cached& c = cached(node, slot(model));
	return {c.mean, c.sd};
}

double GpSpeedModel::predicted_speed(NodeIndex node, int model)
{
	if (node >= node_slot_.size())
		return 1.0;
	return cached(node, slot(model)).speed;
}

}  // namespace dlsched
