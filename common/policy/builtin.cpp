// Every policy built into libdlsched, by name, and the presets that compose them. Explicit: adding a
// policy means adding a line here (no static constructors).
#include "policy/builtin_policies.h"
#include "policy/registry.h"

namespace dlsched {

namespace {

template <class Base, class T, class... Args>
Factory<Base> factory(Args... args)
{
	return [=](const Config&) -> Result<std::unique_ptr<Base>> { return std::unique_ptr<Base>(new T(args...)); };
}

SchedulerSpec spec(const char* ordering, const char* allocation)
{
	SchedulerSpec s;
	s.ordering = ordering;
	s.allocation = allocation;
	return s;
}

PolicyExtension g_extension = nullptr;

}  // namespace

void set_policy_extension(PolicyExtension extension) { g_extension = extension; }

void register_builtin_policies(PolicyRegistry& r)
{
	r.add_ordering("fifo", "first come, first served", factory<Ordering, FifoOrdering>());
	r.add_ordering("srtf", "shortest remaining time first (oracle), preemptive", factory<Ordering, SrtfOrdering>());
	r.add_ordering("tiresias-las", "Tiresias discretised 2D least-attained-service, preemptive",
	               [](const Config& c) -> Result<std::unique_ptr<Ordering>> {
		               return std::unique_ptr<Ordering>(new TiresiasOrdering(
		                       c.get_double_list("TiresiasQueueThresholds"), c.get_double("TiresiasStarveFactor")));
	               });
	r.add_ordering("drf", "lowest dominant (GPU) share of the user first", factory<Ordering, DrfOrdering>());
	r.add_ordering("edf", "earliest deadline first", factory<Ordering, EdfOrdering>());

	r.add_allocation("rigid", "requested GPUs, in order, skipping jobs that do not fit",
	                 factory<Allocation, RigidAllocation>(false));
	r.add_allocation("rigid-strict", "requested GPUs, in order, stopping at the first job that does not fit",
	                 factory<Allocation, RigidAllocation>(true));
	r.add_allocation("easy-backfill", "in order, with EASY backfilling on time limits",
	                 [](const Config& c) -> Result<std::unique_ptr<Allocation>> {
		                 return std::unique_ptr<Allocation>(new EasyBackfillAllocation(c.get_int("BackfillMaxJobs")));
	                 });
	r.add_allocation("drf", "progressive filling by user share, elastic", factory<Allocation, DrfAllocation>());
	r.add_allocation("optimus", "minimum first, then greedy marginal gain, elastic",
	                 factory<Allocation, OptimusAllocation>());

	r.add_placement("pack", "fewest nodes, best fit", factory<Placement, PackPlacement>());
	r.add_placement("spread", "most free nodes first, one GPU at a time", factory<Placement, SpreadPlacement>());
	r.add_placement("count", "GPUs counted anywhere, split over nodes in any way (dlsched-sim --placement-model count)",
	                factory<Placement, CountPlacement>());
	r.add_placement("gp-placement", "fastest predicted nodes: GPU type speed learned per node (Gaussian process)",
	                factory<Placement, GpPlacement>());
	r.add_admission("admit-all", "every job may be scheduled", factory<Admission, AdmitAll>());
	r.add_preemption("none", "never preempt for a waiting job", factory<Preemption, NoPreemption>());
	r.add_preemption("overhead",
	                 "PickyMan: victims of lower QoS classes chosen by least predicted lost time (IPCCC'22)",
	                 [](const Config& c) -> Result<std::unique_ptr<Preemption>> {
		                 return std::unique_ptr<Preemption>(new OverheadPreemption(
		                         c.get_double("PreemptGrace"), c.get_double("PreemptDelayTolerance")));
	                 });
	r.add_preemption("preempt-qos", "Slurm's preempt/qos with PreemptMode=REQUEUE: its victim order, KillWait to checkpoint",
	                 [](const Config& c) -> Result<std::unique_ptr<Preemption>> {
		                 return std::unique_ptr<Preemption>(new QosPreemption(c.get_double("KillWait"), 1));
	                 });
	r.add_loaning("none", "never loan inference nodes", factory<Loaning, NoLoaning>());

	r.add_preset("fifo", "first come first served, head-of-line blocking (sched/builtin)",
	             spec("fifo", "rigid-strict"));
	r.add_preset("slurm-backfill", "FIFO with EASY backfill on time limits (sched/backfill)",
	             spec("fifo", "easy-backfill"));
	r.add_preset("srtf", "preemptive shortest remaining time first (oracle)", spec("srtf", "rigid"));
	r.add_preset("drf", "dominant resource fairness between users, elastic", spec("drf", "drf"));
	r.add_preset("tiresias-las", "Tiresias 2D-LAS with discretised queues (NSDI'19)",
	             spec("tiresias-las", "rigid"));
	r.add_preset("optimus", "Optimus greedy marginal gain on the speed model (EuroSys'18), elastic",
	             spec("srtf", "optimus"));
	r.add_preset("edf", "earliest deadline first", spec("edf", "rigid"));
	// Preemption by priority class over the same non-preemptive base as Slurm's sched/backfill.
	SchedulerSpec pickyman = spec("fifo", "easy-backfill");
	pickyman.preemption = "overhead";
	r.add_preset("pickyman", "PickyMan: FIFO with backfill; high-QoS jobs preempt by least predicted overhead",
	             pickyman);
	SchedulerSpec preempt_qos = spec("fifo", "easy-backfill");
	preempt_qos.preemption = "preempt-qos";
	r.add_preset("preempt-qos", "Slurm's preempt/qos (REQUEUE) over FIFO with backfill: the baseline for pickyman",
	             preempt_qos);
	SchedulerSpec srtf_gp = spec("srtf", "rigid");
	srtf_gp.placement = "gp-placement";
	r.add_preset("srtf-gp", "srtf with speed-aware gp-placement (heterogeneous clusters)", srtf_gp);

	if (g_extension)
		g_extension(r);
}

}  // namespace dlsched
