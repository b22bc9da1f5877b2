#include "policy/registry.h"

namespace dlsched {

namespace {

template <class T, class Table>
void add_to(Table& t, const std::string& name, const std::string& help, Factory<T> f)
{
	if (t.factories.count(name) == 0)
		t.entries.push_back({name, help});
	t.factories[name] = std::move(f);
}

std::string known_names(const std::vector<PolicyRegistry::Entry>& entries)
{
	std::string s;
	for (const auto& e : entries) {
		if (!s.empty())
			s += ", ";
		s += e.name;
	}
	return s;
}

template <class T, class Table>
Result<std::unique_ptr<T>> make_from(const Table& t, const char* kind, const std::string& name,
				     const Config& c)
{
	auto it = t.factories.find(name);
	if (it == t.factories.end()) {
		std::string m = std::string("unknown ") + kind + " policy '" + name +
				"' (known: " + known_names(t.entries) + ")";
		// The learned presets are always registered; their parts only where the models library
		// (libtorch) is linked. Say so rather than leave a preset that lists but does not build.
		if (name == kLearnedPolicy)
			m += "; dl2 and dual-agent are learned policies, which only sched/dlsched and "
			     "dlsched-sim "
			     "built with libtorch load (this program has no models library: install "
			     "libtorch-dev "
			     "and reconfigure, or choose a heuristic policy)";
		return not_found(m);
	}
	return it->second(c);
}

}  // namespace

void PolicyRegistry::add_ordering(const std::string& n, const std::string& h, Factory<Ordering> f)
{
	add_to<Ordering>(ordering_, n, h, std::move(f));
}
void PolicyRegistry::add_allocation(const std::string& n, const std::string& h, Factory<Allocation> f)
{
	add_to<Allocation>(allocation_, n, h, std::move(f));
}
void PolicyRegistry::add_placement(const std::string& n, const std::string& h, Factory<Placement> f)
{
	add_to<Placement>(placement_, n, h, std::move(f));
}
void PolicyRegistry::add_admission(const std::string& n, const std::string& h, Factory<Admission> f)
{
	add_to<Admission>(admission_, n, h, std::move(f));
}
void PolicyRegistry::add_preemption(const std::string& n, const std::string& h, Factory<Preemption> f)
{
	add_to<Preemption>(preemption_, n, h, std::move(f));
}
void PolicyRegistry::add_loaning(const std::string& n, const std::string& h, Factory<Loaning> f)
{
	add_to<Loaning>(loaning_, n, h, std::move(f));
}
void PolicyRegistry::add_preset(const std::string& name, const std::string& help, SchedulerSpec spec)
{
	if (presets_.count(name) == 0)
		preset_entries_.push_back({name, help});
	presets_[name] = std::move(spec);
}

Result<std::unique_ptr<Ordering>> PolicyRegistry::make_ordering(const std::string& n, const Config& c) const
{
	return make_from<Ordering>(ordering_, "ordering", n, c);
}
Result<std::unique_ptr<Allocation>> PolicyRegistry::make_allocation(const std::string& n,
								    const Config& c) const
{
	return make_from<Allocation>(allocation_, "allocation", n, c);
}
Result<std::unique_ptr<Placement>> PolicyRegistry::make_placement(const std::string& n, const Config& c) const
{
	return make_from<Placement>(placement_, "placement", n, c);
}
Result<std::unique_ptr<Admission>> PolicyRegistry::make_admission(const std::string& n, const Config& c) const
{
	return make_from<Admission>(admission_, "admission", n, c);
}
Result<std::unique_ptr<Preemption>> PolicyRegistry::make_preemption(const std::string& n,
								    const Config& c) const
{
	return make_from<Preemption>(preemption_, "preemption", n, c);
}
Result<std::unique_ptr<Loaning>> PolicyRegistry::make_loaning(const std::string& n, const Config& c) const
{
	return make_from<Loaning>(loaning_, "loaning", n, c);
}

Result<SchedulerSpec> PolicyRegistry::preset(const std::string& name) const
{
	auto it = presets_.find(name);
	if (it == presets_.end())
		return not_found("unknown scheduling policy '" + name +
				 "' (known: " + known_names(preset_entries_) + ")");
	return it->second;
}

std::vector<PolicyRegistry::Entry> PolicyRegistry::list(const std::string& kind) const
{
	if (kind == "preset")
		return preset_entries_;
	if (kind == "ordering")
		return ordering_.entries;
	if (kind == "allocation")
		return allocation_.entries;
	if (kind == "placement")
		return placement_.entries;
	if (kind == "admission")
		return admission_.entries;
	if (kind == "preemption")
		return preemption_.entries;
	if (kind == "loaning")
		return loaning_.entries;
	return {};
}

}  // namespace dlsched
