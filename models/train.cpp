#include "train.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "decode.h"
#include "policy_net.h"

namespace dlsched::models {

bool make_sample(PolicyStep step, std::size_t max_decisions, Sample& out)
{
	const auto rows = static_cast<std::size_t>(std::max(0, step.rows));
	if (rows == 0 || step.features != kRowFeatures || step.schema != kFeatureSchema ||
	    step.x.size() != rows * kRowFeatures ||
	    step.context.size() != static_cast<std::size_t>(kContextFeatures) || step.need.size() != rows ||
	    step.unit.size() != rows || step.after.size() != rows)
		return false;
	for (int p : step.order)
		if (p < 0 || static_cast<std::size_t>(p) >= rows)
			return false;
	for (int a : step.after)
		if (a >= static_cast<int>(rows))
			return false;
	DecodedRound d = decode_round(RoundRows{step.need, step.unit, step.after, step.free_gpus}, step.order,
				      max_decisions);
	if (d.chosen.empty())
		return false;
	out = Sample();
	out.step = std::move(step);
	out.chosen = std::move(d.chosen);
	out.left = std::move(d.left);
	out.seq = std::move(d.seq);
	out.pos = std::move(d.pos);
	return true;
}

struct Trainer::State {
	std::shared_ptr<PolicyModel> model;
	TrainOptions opt;
	std::unique_ptr<torch::optim::Adam> adam;
	Rng rng{1};
};

namespace {

// A minibatch as padded tensors.
struct Batch {
	torch::Tensor x, ctx, rows, need, first, end, pos, prereq, left, seq, chosen, stepmask, old_lp, adv,
		ret, weight;
	std::int64_t decisions = 0;
};

Batch make_batch(const std::vector<Sample>& data, const std::vector<std::size_t>& idx)
{
	const auto b = static_cast<std::int64_t>(idx.size());
	std::int64_t w = 1, k = 1;
	for (std::size_t i : idx) {
		w = std::max<std::int64_t>(w, data[i].step.rows);
		k = std::max<std::int64_t>(k, static_cast<std::int64_t>(data[i].chosen.size()));
	}
	Batch t;
	t.x = torch::zeros({b, w, kRowFeatures});
	t.ctx = torch::zeros({b, kContextFeatures});
	t.rows = torch::zeros({b, w});
	t.need = torch::full({b, w}, 1e9f);
	t.first = torch::zeros({b, w});
	t.end = torch::zeros({b, w});
	t.pos = torch::full({b, w}, 1e9f);
	t.prereq = torch::full({b, w}, -1.0f);
	t.left = torch::full({b, k}, 1e9f);
	t.seq = torch::zeros({b, k});
	t.chosen = torch::zeros({b, k}, torch::kLong);
	t.stepmask = torch::zeros({b, k});
	t.old_lp = torch::zeros({b, k});
	t.adv = torch::zeros({b});
	t.ret = torch::zeros({b});
	t.weight = torch::ones({b});
	auto x = t.x.accessor<float, 3>();
	auto ctx = t.ctx.accessor<float, 2>();
	auto rows = t.rows.accessor<float, 2>();
	auto need = t.need.accessor<float, 2>();
	auto first = t.first.accessor<float, 2>();
	auto end = t.end.accessor<float, 2>();
	auto pos = t.pos.accessor<float, 2>();
	auto prereq = t.prereq.accessor<float, 2>();
	auto left = t.left.accessor<float, 2>();
	auto seq = t.seq.accessor<float, 2>();
	auto chosen = t.chosen.accessor<std::int64_t, 2>();
	auto sm = t.stepmask.accessor<float, 2>();
	auto olp = t.old_lp.accessor<float, 2>();
	for (std::int64_t bi = 0; bi < b; ++bi) {
		const Sample& s = data[idx[static_cast<std::size_t>(bi)]];
		for (int r = 0; r < s.step.rows; ++r) {
			const auto ur = static_cast<std::size_t>(r);
			for (int f = 0; f < kRowFeatures; ++f)
				x[bi][r][f] = s.step.x[ur * kRowFeatures + static_cast<std::size_t>(f)];
			rows[bi][r] = 1;
			need[bi][r] = static_cast<float>(s.step.need[ur]);
			first[bi][r] = s.step.unit[ur] == 0 ? 1.0f : 0.0f;
			end[bi][r] = s.step.unit[ur] < 0 ? 1.0f : 0.0f;
			pos[bi][r] = static_cast<float>(s.pos[ur]);
			const int a = s.step.after[ur];
			if (a >= 0)
				prereq[bi][r] = static_cast<float>(s.pos[static_cast<std::size_t>(a)]);
		}
		for (int c = 0; c < kContextFeatures; ++c)
			ctx[bi][c] = s.step.context[static_cast<std::size_t>(c)];
		for (std::size_t kk = 0; kk < s.chosen.size(); ++kk) {
			const auto ki = static_cast<std::int64_t>(kk);
			chosen[bi][ki] = s.chosen[kk];
			left[bi][ki] = static_cast<float>(s.left[kk]);
			seq[bi][ki] = static_cast<float>(s.seq[kk]);
			sm[bi][ki] = 1;
			if (kk < s.old_lp.size())
				olp[bi][ki] = s.old_lp[kk];
		}
		t.adv[bi] = s.advantage;
		t.ret[bi] = s.ret;
		t.weight[bi] = s.weight;
		t.decisions += static_cast<std::int64_t>(s.chosen.size());
	}
	return t;
}

struct PickTerms {
	torch::Tensor lp;       // [B, K] log-probability of each pick (0 where no pick)
	torch::Tensor entropy;  // [B, K]
	torch::Tensor top;      // [B, K] 1 where the pick is the policy's own argmax
};

PickTerms pick_terms(PolicyNetImpl& net, const Batch& t)
{
	auto scores = net.scores(t.x, t.ctx);  // [B, W]
	const auto k = t.left.size(1);
	// The rules of decode.h as masks [B, K, W]: not picked before this pick, fits, its previous unit
	// picked before; the end row only while no first unit fits.
	auto steps = t.seq.unsqueeze(2);
	auto base = (t.need.unsqueeze(1) <= t.left.unsqueeze(2)) & (t.pos.unsqueeze(1) >= steps) &
		    (t.prereq.unsqueeze(1) < steps);
	auto first_fits = (base & (t.first.unsqueeze(1) > 0.5)).any(2, true);
	auto is_end = t.end.unsqueeze(1) > 0.5;
	auto valid = base & (~is_end | ~first_fits);
	// Padded picks: every real row (keeps the softmax finite; their terms are masked out below).
	auto real = t.rows.unsqueeze(1) > 0.5;
	auto mask = real & (valid | (t.stepmask.unsqueeze(2) < 0.5));
	auto logits = scores.unsqueeze(1).expand({scores.size(0), k, scores.size(1)});
	auto masked = logits.masked_fill(~mask, -1e9);
	auto logp = torch::log_softmax(masked, 2);
	PickTerms p;
	p.lp = logp.gather(2, t.chosen.unsqueeze(2)).squeeze(2) * t.stepmask;
	auto pr = logp.exp();
	p.entropy = -(pr * logp).masked_fill(~mask, 0.0).sum(2) * t.stepmask;
	p.top = (masked.argmax(2) == t.chosen).to(torch::kFloat32) * t.stepmask;
	return p;
}

std::vector<std::vector<std::size_t>> minibatches(std::size_t n, std::size_t size, Rng& rng)
{
	std::vector<std::size_t> order(n);
	std::iota(order.begin(), order.end(), 0);
	for (std::size_t i = n; i > 1; --i)  // Fisher-Yates with our generator: the same on every library
		std::swap(order[i - 1], order[rng.below(i)]);
	std::vector<std::vector<std::size_t>> out;
	for (std::size_t i = 0; i < n; i += size)
		out.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
				 order.begin() + static_cast<std::ptrdiff_t>(std::min(n, i + size)));
	return out;
}

torch::Tensor value_of(PolicyNetImpl& net, const Batch& t)
{
	return net.value(t.x, t.rows, t.ctx);
}

// Clips the score network's and the value network's gradients each to `max_norm`: with one joint
// norm, a heavy episode's large value error would shrink the policy's step to nothing.
void clip_gradients(PolicyNetImpl& net, double max_norm)
{
	std::vector<torch::Tensor> policy, value;
	for (auto* l : {&net.s1, &net.s2, &net.s3})
		for (auto& p : (*l)->parameters())
			policy.push_back(p);
	for (auto* l : {&net.v1, &net.v2, &net.v3})
		for (auto& p : (*l)->parameters())
			value.push_back(p);
	torch::nn::utils::clip_grad_norm_(policy, max_norm);
	torch::nn::utils::clip_grad_norm_(value, max_norm);
}

}  // namespace

Trainer::Trainer(std::shared_ptr<PolicyModel> model, TrainOptions options, std::uint64_t seed) : s_(new State)
{
	s_->model = std::move(model);
	s_->opt = options;
	s_->rng = Rng(seed, 3);
	torch::manual_seed(seed);
	s_->model->impl().net->train();
	s_->adam.reset(new torch::optim::Adam(s_->model->impl().net->parameters(),
					      torch::optim::AdamOptions(options.lr)));
}

Trainer::~Trainer()
{
	if (s_ && s_->model)
		s_->model->impl().net->eval();
}

void Trainer::set_learning_rate(double lr)
{
	for (auto& g : s_->adam->param_groups())
		static_cast<torch::optim::AdamOptions&>(g.options()).lr(lr);
}

TrainStats Trainer::supervised_epoch(std::vector<Sample>& data, bool fit_value)
{
	TrainStats st;
	auto& net = *s_->model->impl().net;
	double top = 0;
	for (const auto& mb : minibatches(data.size(), s_->opt.batch, s_->rng)) {
		Batch t = make_batch(data, mb);
		PickTerms p = pick_terms(net, t);
		const double n = std::max<double>(1.0, static_cast<double>(t.decisions));
		auto loss = -(p.lp * t.weight.unsqueeze(1)).sum() / n;
		auto vloss = torch::zeros({});
		if (fit_value)
			vloss = torch::mse_loss(value_of(net, t), t.ret);
		s_->adam->zero_grad();
		(loss + s_->opt.value_coef * vloss).backward();
		clip_gradients(net, s_->opt.max_grad_norm);
		s_->adam->step();
		st.policy_loss += loss.item<double>() * n;
		st.value_loss += vloss.item<double>() * static_cast<double>(mb.size());
		// Agreement on the first pick of each round: how often the policy's argmax is the teacher's.
		top += p.top.select(1, 0).sum().item<double>();
		st.decisions += static_cast<std::size_t>(t.decisions);
	}
	if (st.decisions)
		st.policy_loss /= static_cast<double>(st.decisions);
	if (!data.empty()) {
		st.value_loss /= static_cast<double>(data.size());
		st.first_pick_agreement = top / static_cast<double>(data.size());
	}
	return st;
}

void Trainer::record_log_probs(std::vector<Sample>& data)
{
	torch::NoGradGuard ng;
	auto& net = *s_->model->impl().net;
	for (std::size_t i = 0; i < data.size(); i += s_->opt.batch) {
		std::vector<std::size_t> idx;
		for (std::size_t j = i; j < std::min(data.size(), i + s_->opt.batch); ++j)
			idx.push_back(j);
		Batch t = make_batch(data, idx);
		auto lp = pick_terms(net, t).lp.contiguous();
		auto a = lp.accessor<float, 2>();
		for (std::size_t bi = 0; bi < idx.size(); ++bi) {
			Sample& s = data[idx[bi]];
			s.old_lp.assign(s.chosen.size(), 0.0f);
			for (std::size_t k = 0; k < s.chosen.size(); ++k)
				s.old_lp[k] = a[static_cast<std::int64_t>(bi)][static_cast<std::int64_t>(k)];
		}
	}
}

std::vector<float> Trainer::values(const std::vector<Sample>& data)
{
	torch::NoGradGuard ng;
	auto& net = *s_->model->impl().net;
	std::vector<float> out;
	out.reserve(data.size());
	for (std::size_t i = 0; i < data.size(); i += s_->opt.batch) {
		std::vector<std::size_t> idx;
		for (std::size_t j = i; j < std::min(data.size(), i + s_->opt.batch); ++j)
			idx.push_back(j);
		Batch t = make_batch(data, idx);
		auto v = value_of(net, t).contiguous();
		for (std::int64_t j = 0; j < v.size(0); ++j)
			out.push_back(v[j].item<float>());
	}
	return out;
}

TrainStats Trainer::ppo_epoch(std::vector<Sample>& data)
{
	TrainStats st;
	auto& net = *s_->model->impl().net;
	const TrainOptions& o = s_->opt;
	for (const auto& mb : minibatches(data.size(), o.batch, s_->rng)) {
		Batch t = make_batch(data, mb);
		PickTerms p = pick_terms(net, t);
		const double n = std::max<double>(1.0, static_cast<double>(t.decisions));
		auto ratio = torch::exp(p.lp - t.old_lp) * t.stepmask;
		auto adv = t.adv.unsqueeze(1);
		auto surr = torch::min(ratio * adv, torch::clamp(ratio, 1.0 - o.clip, 1.0 + o.clip) * adv) *
			    t.stepmask;
		auto ploss = -surr.sum() / n;
		auto ent = p.entropy.sum() / n;
		auto vloss = torch::smooth_l1_loss(value_of(net, t), t.ret);
		auto loss = ploss - o.entropy * ent + o.value_coef * vloss;
		s_->adam->zero_grad();
		loss.backward();
		clip_gradients(net, o.max_grad_norm);
		s_->adam->step();
		st.policy_loss += ploss.item<double>() * n;
		st.entropy += ent.item<double>() * n;
		st.value_loss += vloss.item<double>() * static_cast<double>(mb.size());
		st.decisions += static_cast<std::size_t>(t.decisions);
		// Approximate KL(old || new) per pick, (r - 1) - log r (Schulman's unbiased estimator): once
		// the policy moved past the target, the rest of this iteration's data is stale.
		{
			torch::NoGradGuard ng;
			auto log_r = (p.lp - t.old_lp) * t.stepmask;
			auto kl = ((log_r.exp() - 1.0) - log_r) * t.stepmask;
			st.kl = kl.sum().item<double>() / n;
		}
		if (o.target_kl > 0 && st.kl > 1.5 * o.target_kl) {
			st.stopped = true;
			break;
		}
	}
	if (st.decisions) {
		st.policy_loss /= static_cast<double>(st.decisions);
		st.entropy /= static_cast<double>(st.decisions);
	}
	if (!data.empty())
		st.value_loss /= static_cast<double>(data.size());
	return st;
}

TrainStats Trainer::awr_epoch(std::vector<Sample>& data)
{
	for (Sample& s : data)
		s.weight = static_cast<float>(std::min(20.0, std::exp(s.advantage / s_->opt.awr_beta)));
	TrainStats st = supervised_epoch(data, true);
	for (Sample& s : data)
		s.weight = 1;
	return st;
}

}  // namespace dlsched::models
