// The networks themselves (libtorch): included only by models/*.cpp.
//
// Score network: the same MLP on every row (the job's features and the cluster's), so the policy does
// not depend on the order of rows or the window's size (DL2 uses one MLP over a fixed array of job
// slots; a per-row network generalises to windows and clusters of any size and trains from far fewer
// samples). Value network: an MLP over the mean and maximum of the rows' features and the cluster's.
#ifndef DLSCHED_MODELS_POLICY_NET_H
#define DLSCHED_MODELS_POLICY_NET_H

#include <torch/torch.h>

#include "policy_model.h"

namespace dlsched::models {

struct PolicyNetImpl : torch::nn::Cloneable<PolicyNetImpl> {
	explicit PolicyNetImpl(int hidden);
	void reset() override;  // (re)creates the layers (Cloneable: clone() calls it)
	// x: [B, W, F]; ctx: [B, C]  ->  scores [B, W]
	torch::Tensor scores(const torch::Tensor& x, const torch::Tensor& ctx);
	// x: [B, W, F]; rows: [B, W] (1 for real rows); ctx: [B, C]  ->  values [B]
	torch::Tensor value(const torch::Tensor& x, const torch::Tensor& rows, const torch::Tensor& ctx);

	torch::nn::Linear s1{nullptr}, s2{nullptr}, s3{nullptr};
	torch::nn::Linear v1{nullptr}, v2{nullptr}, v3{nullptr};
	int hidden = 64;
};
TORCH_MODULE(PolicyNet);

struct PolicyModel::Impl {
	PolicyNet net{nullptr};
};

}  // namespace dlsched::models

#endif
