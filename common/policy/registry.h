// PolicyRegistry: every policy by name, and the named presets (the `--policy` names) that compose one
// of each kind. Filled explicitly by register_builtin_policies(): no static constructors.
#ifndef DLSCHED_POLICY_REGISTRY_H
#define DLSCHED_POLICY_REGISTRY_H

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "policy/admission.h"
#include "policy/allocation.h"
#include "policy/loaning.h"
#include "policy/ordering.h"
#include "policy/placement.h"
#include "policy/preemption.h"
#include "util/status.h"

namespace dlsched {

// One policy of each kind, by name.
struct SchedulerSpec {
	std::string ordering = "fifo";
	std::string allocation = "rigid";
	std::string placement = "pack";
	std::string admission = "admit-all";
	std::string preemption = "none";
	std::string loaning = "none";
	std::string fairness = "none";  // none | quota | fairshare (policy/fairness.h)
};

template <class T>
using Factory = std::function<Result<std::unique_ptr<T>>(const Config&)>;

class PolicyRegistry {
public:
	void add_ordering(const std::string& name, const std::string& help, Factory<Ordering> f);
	void add_allocation(const std::string& name, const std::string& help, Factory<Allocation> f);
	void add_placement(const std::string& name, const std::string& help, Factory<Placement> f);
	void add_admission(const std::string& name, const std::string& help, Factory<Admission> f);
	void add_preemption(const std::string& name, const std::string& help, Factory<Preemption> f);
	void add_loaning(const std::string& name, const std::string& help, Factory<Loaning> f);
	// A preset is what `dlsched-sim --policy NAME` and `Policy=NAME` select.
	void add_preset(const std::string& name, const std::string& help, SchedulerSpec spec);

	// Unknown names give kNotFound with the list of known names in the message.
	Result<std::unique_ptr<Ordering>> make_ordering(const std::string& name, const Config& c) const;
	Result<std::unique_ptr<Allocation>> make_allocation(const std::string& name, const Config& c) const;
	Result<std::unique_ptr<Placement>> make_placement(const std::string& name, const Config& c) const;
	Result<std::unique_ptr<Admission>> make_admission(const std::string& name, const Config& c) const;
	Result<std::unique_ptr<Preemption>> make_preemption(const std::string& name, const Config& c) const;
	Result<std::unique_ptr<Loaning>> make_loaning(const std::string& name, const Config& c) const;
	Result<SchedulerSpec> preset(const std::string& name) const;

	struct Entry {
		std::string name;
		std::string help;
	};
	// Names in registration order, per kind ("preset", "ordering", "allocation", "placement",
	// "admission", "preemption", "loaning").
	std::vector<Entry> list(const std::string& kind) const;

private:
	template <class T>
	struct Table {
		std::vector<Entry> entries;
		std::map<std::string, Factory<T>> factories;
	};
	Table<Ordering> ordering_;
	Table<Allocation> allocation_;
	Table<Placement> placement_;
	Table<Admission> admission_;
	Table<Preemption> preemption_;
	Table<Loaning> loaning_;
	std::vector<Entry> preset_entries_;
	std::map<std::string, SchedulerSpec> presets_;
};

// Registers every policy built into libdlsched (policy/builtin.cpp), then the extension's when one
// is installed.
void register_builtin_policies(PolicyRegistry& registry);

// The learned policies' name (ordering, allocation and preset `dl2`; preset `dual-agent`), and the
// allocation that stands in for the learned one when its model cannot be used, or where the models
// library is not linked and only the preset's placement is wanted.
inline constexpr const char* kLearnedPolicy = "dl2";
inline constexpr const char* kLearnedFallbackAllocation = "mckp";

// Libraries above libdlsched (models/, which links libtorch) install their registration function
// here, explicitly, from the host's main() or init(); register_builtin_policies() then calls it
// last. A plain function pointer: no static constructors, and libdlsched never links libtorch.
using PolicyExtension = void (*)(PolicyRegistry&);
void set_policy_extension(PolicyExtension extension);

}  // namespace dlsched

#endif
