// Every policy built into libdlsched, by name, and the presets that compose them. Explicit: adding a
// policy means adding a line here (no static constructors).
#include <cctype>
#include <string>

#include "policy/builtin_policies.h"
#include "policy/registry.h"

namespace dlsched {

namespace {

template <class Base, class T, class... Args>
Factory<Base> factory(Args... args)
{
	return [=](const Config&) -> Result<std::unique_ptr<Base>> {
		return std::unique_ptr<Base>(new T(args...));
	};
}

SchedulerSpec spec(const char* ordering, const char* allocation)
{
	SchedulerSpec s;
	s.ordering = ordering;
	s.allocation = allocation;
	return s;
}

PolicyExtension g_extension = nullptr;

std::string lower(std::string s)
{
	for (char& ch : s)
		ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
	return s;
}

}  // namespace

void set_policy_extension(PolicyExtension extension)
{
	g_extension = extension;
}

void register_builtin_policies(PolicyRegistry& r)
{
	r.add_ordering("fifo", "first come, first served", factory<Ordering, FifoOrdering>());
	r.add_ordering("srtf", "shortest remaining time first (oracle), preemptive",
		       factory<Ordering, SrtfOrdering>());
	r.add_ordering("tiresias-las", "Tiresias discretised 2D least-attained-service, preemptive",
		       [](const Config& c) -> Result<std::unique_ptr<Ordering>> {
			       return std::unique_ptr<Ordering>(
				       new TiresiasOrdering(c.get_double_list("TiresiasQueueThresholds"),
							    c.get_double("TiresiasStarveFactor")));
		       });
	r.add_ordering("drf", "lowest dominant (GPU) share of the user first",
		       factory<Ordering, DrfOrdering>());
	r.add_ordering("edf", "earliest deadline first", factory<Ordering, EdfOrdering>());
	r.add_ordering("least-slack",
		       "least slack (deadline - now - remaining) first; jobs without a deadline follow by "
		       "LeastSlackBase=",
		       [](const Config& c) -> Result<std::unique_ptr<Ordering>> {
			       const std::string b = lower(c.get_string("LeastSlackBase"));
			       std::unique_ptr<Ordering> base;
			       if (b == "fifo")
				       base.reset(new FifoOrdering());
			       else if (b == "edf")
				       base.reset(new EdfOrdering());
			       else if (b == "drf")
				       base.reset(new DrfOrdering());
			       else
				       base.reset(new SrtfOrdering());
			       const double z = normal_quantile(c.get_double("DeadlineConfidence"));
			       return std::unique_ptr<Ordering>(new LeastSlackOrdering(std::move(base), z));
		       });

	r.add_allocation("rigid", "requested GPUs, in order, skipping jobs that do not fit",
			 factory<Allocation, RigidAllocation>(false));
	r.add_allocation("rigid-strict",
			 "requested GPUs, in order, stopping at the first job that does not fit",
			 factory<Allocation, RigidAllocation>(true));
	r.add_allocation("easy-backfill", "in order, with EASY backfilling on time limits",
			 [](const Config& c) -> Result<std::unique_ptr<Allocation>> {
				 return std::unique_ptr<Allocation>(
					 new EasyBackfillAllocation(c.get_int("BackfillMaxJobs")));
			 });
	r.add_allocation("drf", "progressive filling by user share, elastic",
			 factory<Allocation, DrfAllocation>());
	r.add_allocation("optimus", "minimum first, then greedy marginal gain, elastic",
			 factory<Allocation, OptimusAllocation>());

	r.add_allocation("mckp",
			 "Aryl: minimums first, then spare GPUs to elastic jobs by a multiple-choice "
			 "knapsack on JCT reduction, elastic",
			 factory<Allocation, MckpAllocation>());

	r.add_allocation(
		"deadline-autoscale",
		"deadline jobs at the fewest GPUs in their range that meet the deadline (grown, shrunk), the "
		"rest as asked, elastic",
		[](const Config& c) -> Result<std::unique_ptr<Allocation>> {
			return std::unique_ptr<Allocation>(new DeadlineAutoscaleAllocation(
				c.get_double("DeadlineConfidence"), c.get_double("DeadlineUrgency")));
		});

	r.add_placement("pack", "fewest nodes, best fit", factory<Placement, PackPlacement>());
	r.add_placement("spread", "most free nodes first, one GPU at a time",
			factory<Placement, SpreadPlacement>());
	r.add_placement(
		"count",
		"GPUs counted anywhere, split over nodes in any way (dlsched-sim --placement-model count)",
		factory<Placement, CountPlacement>());
	r.add_placement("gp-placement",
			"fastest predicted nodes: GPU type speed learned per node (Gaussian process)",
			factory<Placement, GpPlacement>());
	r.add_admission("admit-all", "every job may be scheduled", factory<Admission, AdmitAll>());
	r.add_admission("deadline",
			"a deadline job is admitted when it likely finishes in time at its best size "
			"(DeadlineInfeasible= for the rest)",
			[](const Config& c) -> Result<std::unique_ptr<Admission>> {
				const std::string w = lower(c.get_string("DeadlineInfeasible"));
				const auto how = w == "hold"     ? DeadlineAdmission::Infeasible::kHold
						 : w == "cancel" ? DeadlineAdmission::Infeasible::kCancel
								 : DeadlineAdmission::Infeasible::kBestEffort;
				return std::unique_ptr<Admission>(
					new DeadlineAdmission(c.get_double("DeadlineConfidence"), how));
			});
	r.add_preemption("none", "never preempt for a waiting job", factory<Preemption, NoPreemption>());
	r.add_preemption(
		"overhead",
		"PickyMan: victims of lower QoS classes chosen by least predicted lost time (IPCCC'22)",
		[](const Config& c) -> Result<std::unique_ptr<Preemption>> {
			return std::unique_ptr<Preemption>(new OverheadPreemption(
				c.get_double("PreemptGrace"), c.get_double("PreemptDelayTolerance")));
		});
	r.add_preemption(
		"preempt-qos",
		"Slurm's preempt/qos with PreemptMode=REQUEUE: its victim order, KillWait to checkpoint",
		[](const Config& c) -> Result<std::unique_ptr<Preemption>> {
			return std::unique_ptr<Preemption>(new QosPreemption(c.get_double("KillWait"), 1));
		});
	r.add_loaning("none", "never loan inference nodes", factory<Loaning, NoLoaning>());
	r.add_loaning(
		"aryl",
		"Aryl/Lyra: lend inference nodes inference does not need; take back the cheapest to reclaim "
		"first (EuroSys'23)",
		[](const Config& c) -> Result<std::unique_ptr<Loaning>> {
			return std::unique_ptr<Loaning>(new ArylLoaning(
				c.get_double("ReclaimTimeout"), static_cast<int>(c.get_int("LoanHeadroom"))));
		});

	r.add_preset("fifo", "first come first served, head-of-line blocking (sched/builtin)",
		     spec("fifo", "rigid-strict"));
	r.add_preset("slurm-backfill", "FIFO with EASY backfill on time limits (sched/backfill)",
		     spec("fifo", "easy-backfill"));
	SchedulerSpec fairshare = spec("fifo", "easy-backfill");
	fairshare.fairness = "fairshare";
	r.add_preset("slurm-fairshare",
		     "Slurm's multifactor fair-share (accounts' shares and decayed usage) with EASY backfill",
		     fairshare);
	r.add_preset("srtf", "preemptive shortest remaining time first (oracle)", spec("srtf", "rigid"));
	r.add_preset("drf", "dominant resource fairness between users, elastic", spec("drf", "drf"));
	r.add_preset("tiresias-las", "Tiresias 2D-LAS with discretised queues (NSDI'19)",
		     spec("tiresias-las", "rigid"));
	r.add_preset("optimus", "Optimus greedy marginal gain on the speed model (EuroSys'18), elastic",
		     spec("srtf", "optimus"));
	r.add_preset("edf", "earliest deadline first", spec("edf", "rigid"));
	r.add_preset("lsf", "least slack first, requested sizes (a baseline for qos-deadline)",
		     spec("least-slack", "rigid"));
	SchedulerSpec qos_deadline = spec("least-slack", "deadline-autoscale");
	qos_deadline.admission = "deadline";
	r.add_preset("qos-deadline",
		     "deadline QoS (IJCNN'19): admission by predicted finish, least slack first, GPUs scaled "
		     "to each deadline",
		     qos_deadline);
	// Preemption by priority class over the same non-preemptive base as Slurm's sched/backfill.
	SchedulerSpec pickyman = spec("fifo", "easy-backfill");
	pickyman.preemption = "overhead";
	r.add_preset("pickyman",
		     "PickyMan: FIFO with backfill; high-QoS jobs preempt by least predicted overhead",
		     pickyman);
	SchedulerSpec preempt_qos = spec("fifo", "easy-backfill");
	preempt_qos.preemption = "preempt-qos";
	r.add_preset("preempt-qos",
		     "Slurm's preempt/qos (REQUEUE) over FIFO with backfill: the baseline for pickyman",
		     preempt_qos);
	r.add_preset(
		"mckp",
		"srtf with Aryl's knapsack allocation of spare GPUs to elastic jobs (no loaning), elastic",
		spec("srtf", "mckp"));
	SchedulerSpec aryl = spec("srtf", "mckp");
	aryl.loaning = "aryl";
	r.add_preset("aryl",
		     "Aryl/Lyra (EuroSys'23): srtf, spare GPUs to elastic jobs by knapsack, idle inference "
		     "nodes loaned",
		     aryl);
	SchedulerSpec srtf_gp = spec("srtf", "rigid");
	srtf_gp.placement = "gp-placement";
	r.add_preset("srtf-gp", "srtf with speed-aware gp-placement (heterogeneous clusters)", srtf_gp);
	// The learned presets are named here so that every library knows what they are made of; their
	// ordering and allocation (`dl2`) are registered by the models library (models/learned.cpp),
	// which only sched/dlsched and dlsched-sim/dlsched-train link. A library without it cannot build
	// them (the error says so), except for placement alone (dlsched_scheduler_create_placement).
	SchedulerSpec dl2 = spec("dl2", "dl2");
	r.add_preset(
		"dl2",
		"DL2: the policy network decides which jobs get GPUs and how many, unit by unit (TPDS'21)",
		dl2);
	SchedulerSpec dual = dl2;
	dual.placement = "gp-placement";
	r.add_preset("dual-agent",
		     "dual-agent (KDD'23): DL2's learned agent with the Gaussian-process placement agent "
		     "(gp-placement)",
		     dual);

	if (g_extension)
		g_extension(r);
}

}  // namespace dlsched
