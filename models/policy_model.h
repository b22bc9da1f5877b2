// PolicyModel: DL2's policy and value networks behind a header without libtorch, so that policies,
// tools and the C ABI never see torch types. The networks and the file format live in
// policy_model.cpp; training reaches them through models/train.h.
//
// Model file (a libtorch archive, torch::serialize): the networks' parameters under "net", and
//   dlsched.format   int     kModelFormat (the file layout)
//   dlsched.schema   int     the feature schema the model was trained on (features.h)
//   dlsched.hidden   int     hidden width of both networks
//   dlsched.info     string  JSON: how the model was trained (dlsched-train writes it; the model card)
// A file of another format or schema, a missing or unreadable file, or a corrupt one is refused with
// a message naming the file and what to do.
#ifndef DLSCHED_MODELS_POLICY_MODEL_H
#define DLSCHED_MODELS_POLICY_MODEL_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "features.h"
#include "util/status.h"

namespace dlsched::models {

inline constexpr int kModelFormat = 1;

struct ModelInfo {
	int format = kModelFormat;
	int schema = kFeatureSchema;
	int hidden = 64;
	std::string info = "{}";  // JSON
};

class PolicyModel {
public:
	struct Impl;

	// A fresh model with seeded random weights.
	static std::shared_ptr<PolicyModel> create(int hidden, std::uint64_t seed);
	// Reads a model file; errors name the file and the fix.
	static Result<std::shared_ptr<PolicyModel>> load(const std::string& path);
	// Writes atomically (a temporary file renamed into place), so that a reader never sees half a file.
	[[nodiscard]] Status save(const std::string& path) const;

	// Scores of the window's rows (higher: chosen earlier) and the value estimate, without gradients.
	// Runs on the CPU, in the calling thread (the caller sets libtorch's thread count).
	void scores(const EncodedWindow& w, std::vector<float>& out) const;
	double value(const EncodedWindow& w) const;

	const ModelInfo& info() const { return info_; }
	void set_info_json(std::string json) { info_.info = std::move(json); }
	// Stamps other format and schema numbers: only for tests of the version checks.
	void set_versions_for_testing(int format, int schema)
	{
		info_.format = format;
		info_.schema = schema;
	}
	std::size_t parameter_count() const;

	// A deep copy (training keeps the best model seen while it goes on changing the current one).
	std::shared_ptr<PolicyModel> clone() const;

	Impl& impl() const { return *impl_; }
	~PolicyModel();

private:
	PolicyModel();
	ModelInfo info_;
	std::unique_ptr<Impl> impl_;
};

// Sets libtorch to one intra-op and one inter-op thread (in slurmctld: the scheduler's own thread
// does inference; libtorch's pools would compete with the daemon). Safe to call more than once.
void use_one_thread();

}  // namespace dlsched::models

#endif
