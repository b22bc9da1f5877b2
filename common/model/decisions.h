// Decisions: the plain list of actions a scheduling cycle returns. Hosts apply them in order.
#ifndef DLSCHED_MODEL_DECISIONS_H
#define DLSCHED_MODEL_DECISIONS_H

#include <string>
#include <vector>

#include "model/job.h"

namespace dlsched {

enum class ActionKind : std::uint8_t {
	kSetPriority,  // pending job: its place in the queue (higher priority starts first)
	kStart,        // pending job: start now with `gpus` GPUs on `placement`
	kResize,       // running job: change to `gpus` GPUs on `placement` (checkpoint, requeue, resume)
	kRequeue,      // running job: checkpoint and requeue (preemption)
	kLoan,         // node: lend an inference node to training
	kReclaim,      // node: give a loaned node back to inference
	kAdmission,    // pending job: the Admission policy did not simply admit it (`admission`, `reason`)
};

// kAdmission: what the host should do with the job.
enum class AdmissionAction : std::uint8_t {
	kNone,
	kBestEffort,  // it runs when nothing admitted needs the GPUs: show the reason, lower its priority
	kHold,        // hold it (Slurm: held, the reason shown) until a user or admin releases it
	kCancel,      // end it (Slurm: cancelled as its own --deadline would), the reason logged
	kWait,        // it waits: only show the reason (a high-class job held back by deadline work)
};

const char* action_kind_name(ActionKind kind);

struct Action {
	ActionKind kind = ActionKind::kSetPriority;
	JobId job = 0;
	NodeIndex node = 0;                                  // kLoan / kReclaim
	int gpus = 0;                                        // kStart / kResize
	std::vector<NodeShare> placement;                    // kStart / kResize
	double priority = 0;                                 // kSetPriority
	AdmissionAction admission = AdmissionAction::kNone;  // kAdmission
	// kRequeue / kResize: seconds the job may take to checkpoint before it is requeued anyway
	// (< 0: the host's PreemptGrace), and what stopping it was predicted to cost when decided
	// (the job's PreemptionCost: to its safe point + the write; the read + warm-up).
	double grace = -1;
	double predicted_suspend = -1;
	double predicted_resume = -1;
	std::string reason;  // short, for logs ("preempted by 123", "backfill")
};

struct Decisions {
	std::vector<Action> actions;
	// Pending jobs in the order the policy wants them considered (first = most urgent); hosts without
	// numeric priorities (site_factor, sacct checks) use this.
	std::vector<JobId> order;
};

}  // namespace dlsched

#endif
