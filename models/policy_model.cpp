#include "policy_model.h"

#include <cstdio>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

#include "policy_net.h"
#include "util/trusted_file.h"

namespace dlsched::models {

PolicyNetImpl::PolicyNetImpl(int h) : hidden(h)
{
	reset();
}

void PolicyNetImpl::reset()
{
	const int in = kRowFeatures + kContextFeatures;
	s1 = register_module("s1", torch::nn::Linear(in, hidden));
	s2 = register_module("s2", torch::nn::Linear(hidden, hidden));
	s3 = register_module("s3", torch::nn::Linear(hidden, 1));
	v1 = register_module("v1", torch::nn::Linear(2 * kRowFeatures + kContextFeatures, hidden));
	v2 = register_module("v2", torch::nn::Linear(hidden, hidden));
	v3 = register_module("v3", torch::nn::Linear(hidden, 1));
}

torch::Tensor PolicyNetImpl::scores(const torch::Tensor& x, const torch::Tensor& ctx)
{
	const auto b = x.size(0), w = x.size(1);
	auto c = ctx.unsqueeze(1).expand({b, w, ctx.size(1)});
	auto h = torch::tanh(s1(torch::cat({x, c}, 2)));
	h = torch::tanh(s2(h));
	return s3(h).squeeze(2);
}

torch::Tensor PolicyNetImpl::value(const torch::Tensor& x, const torch::Tensor& rows,
				   const torch::Tensor& ctx)
{
	auto m = rows.unsqueeze(2);  // [B, W, 1]
	auto count = m.sum(1).clamp_min(1.0);
	auto mean = (x * m).sum(1) / count;
	auto mx = (x * m + (1.0 - m) * -1e4).amax(1);
	mx = torch::where(count > 0.5, mx, torch::zeros_like(mx));
	auto h = torch::tanh(v1(torch::cat({mean, mx, ctx}, 1)));
	h = torch::tanh(v2(h));
	return v3(h).squeeze(1);
}

PolicyModel::PolicyModel() : impl_(new Impl) {}
PolicyModel::~PolicyModel() = default;

std::shared_ptr<PolicyModel> PolicyModel::create(int hidden, std::uint64_t seed)
{
	torch::manual_seed(seed);
	std::shared_ptr<PolicyModel> m(new PolicyModel());
	m->info_.hidden = hidden;
	m->impl_->net = PolicyNet(hidden);
	return m;
}

std::shared_ptr<PolicyModel> PolicyModel::clone() const
{
	std::shared_ptr<PolicyModel> m(new PolicyModel());
	m->info_ = info_;
	m->impl_->net = std::dynamic_pointer_cast<PolicyNetImpl>(impl_->net->clone());
	return m;
}

std::size_t PolicyModel::parameter_count() const
{
	std::size_t n = 0;
	for (const auto& p : impl_->net->parameters())
		n += static_cast<std::size_t>(p.numel());
	return n;
}

Status PolicyModel::save(const std::string& path) const
{
	const std::string tmp = path + ".tmp." + std::to_string(getpid());
	try {
		torch::serialize::OutputArchive a;
		a.write("dlsched.format", c10::IValue(static_cast<int64_t>(info_.format)));
		a.write("dlsched.schema", c10::IValue(static_cast<int64_t>(info_.schema)));
		a.write("dlsched.hidden", c10::IValue(static_cast<int64_t>(info_.hidden)));
		a.write("dlsched.info", c10::IValue(info_.info));
		torch::serialize::OutputArchive net;
		impl_->net->save(net);
		a.write("net", net);
		a.save_to(tmp);
	} catch (const std::exception& e) {
		std::remove(tmp.c_str());
		return io_error(path + ": cannot write the model: " + e.what());
	}
	if (std::rename(tmp.c_str(), path.c_str()) != 0) {
		std::remove(tmp.c_str());
		return io_error(path + ": cannot rename the new model into place");
	}
	return Status::ok();
}

namespace {

Result<int64_t> read_int(torch::serialize::InputArchive& a, const char* key, const std::string& path)
{
	c10::IValue v;
	if (!a.try_read(key, v) || !v.isInt())
		return parse_error(path + ": not a dlsched model (no " + key +
				   "); train one with dlsched-train or use the shipped model");
	return v.toInt();
}

}  // namespace

Result<std::shared_ptr<PolicyModel>> PolicyModel::load(const std::string& path)
{
	struct stat st;
	if (path.empty())
		return not_found("no model file given (ModelFile=)");
	if (::stat(path.c_str(), &st) != 0)
		return not_found(
			path + ": model file not found; set ModelFile= to a model written by dlsched-train");
	// In slurmctld: a file that a user could write is never loaded (util/trusted_file.h).
	if (Status trust = check_model_file(path); !trust.is_ok())
		return trust;
	std::shared_ptr<PolicyModel> m(new PolicyModel());
	try {
		torch::serialize::InputArchive a;
		a.load_from(path);
		auto format = read_int(a, "dlsched.format", path);
		if (!format.is_ok())
			return format.status();
		if (*format != kModelFormat)
			return invalid_argument(path + ": model format " + std::to_string(*format) +
						", this dlsched reads format " +
						std::to_string(kModelFormat) +
						"; retrain it with this version's dlsched-train");
		auto schema = read_int(a, "dlsched.schema", path);
		if (!schema.is_ok())
			return schema.status();
		if (*schema != kFeatureSchema)
			return invalid_argument(path + ": trained on feature schema " +
						std::to_string(*schema) + ", this dlsched encodes schema " +
						std::to_string(kFeatureSchema) +
						"; retrain it with this version's dlsched-train");
		auto hidden = read_int(a, "dlsched.hidden", path);
		if (!hidden.is_ok())
			return hidden.status();
		if (*hidden < 1 || *hidden > 4096)
			return invalid_argument(path + ": hidden width " + std::to_string(*hidden) +
						" out of range: corrupt model file");
		c10::IValue info;
		if (a.try_read("dlsched.info", info) && info.isString())
			m->info_.info = info.toStringRef();
		m->info_.format = static_cast<int>(*format);
		m->info_.schema = static_cast<int>(*schema);
		m->info_.hidden = static_cast<int>(*hidden);
		m->impl_->net = PolicyNet(m->info_.hidden);
		torch::serialize::InputArchive net;
		if (!a.try_read("net", net))
			return parse_error(
				path +
				": the model has no networks (\"net\"): corrupt or not a dlsched model");
		m->impl_->net->load(net);
	} catch (const std::exception& e) {
		std::string what = e.what();
		const std::size_t nl = what.find('\n');
		if (nl != std::string::npos)
			what.resize(nl);
		return parse_error(path +
				   ": cannot read the model (corrupt or not a dlsched model file): " + what);
	}
	for (const auto& p : m->impl_->net->parameters())
		if (!torch::isfinite(p).all().item<bool>())
			return invalid_argument(path + ": the model has non-finite weights; retrain it");
	m->impl_->net->eval();
	return m;
}

void PolicyModel::scores(const EncodedWindow& w, std::vector<float>& out) const
{
	out.assign(w.rows(), 0.0f);
	if (w.rows() == 0)
		return;
	torch::NoGradGuard no_grad;
	const auto rows = static_cast<int64_t>(w.rows());
	auto x = torch::from_blob(const_cast<float*>(w.x.data()), {1, rows, kRowFeatures}, torch::kFloat32);
	auto c = torch::from_blob(const_cast<float*>(w.context.data()), {1, kContextFeatures},
				  torch::kFloat32);
	auto s = impl_->net->scores(x, c).contiguous();
	const float* p = s.data_ptr<float>();
	for (int64_t i = 0; i < rows; ++i)
		out[static_cast<std::size_t>(i)] = p[i];
}

double PolicyModel::value(const EncodedWindow& w) const
{
	torch::NoGradGuard no_grad;
	const auto rows = static_cast<int64_t>(w.rows());
	auto x = rows > 0 ? torch::from_blob(const_cast<float*>(w.x.data()), {1, rows, kRowFeatures},
					     torch::kFloat32)
			  : torch::zeros({1, 1, kRowFeatures});
	auto m = rows > 0 ? torch::ones({1, rows}) : torch::zeros({1, 1});
	auto c = torch::from_blob(const_cast<float*>(w.context.data()), {1, kContextFeatures},
				  torch::kFloat32);
	return impl_->net->value(x, m, c).item<double>();
}

void use_one_thread()
{
	static std::once_flag once;  // schedulers may be built from more than one thread (reconfigure)
	std::call_once(once, [] {
		torch::set_num_threads(1);
		try {
			torch::set_num_interop_threads(1);
		} catch (const std::exception&) {
			// Only settable before the first inter-op use; the intra-op setting is the one that
			// matters.
		}
	});
}

}  // namespace dlsched::models
