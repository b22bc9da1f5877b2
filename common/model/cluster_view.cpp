#include "model/cluster_view.h"

#include "model/decisions.h"

namespace dlsched {

int ClusterView::total_gpus() const
{
	int n = 0;
	for (const Node& node : nodes)
		n += node.gpus_total;
	return n;
}

int ClusterView::free_gpus() const
{
	int n = 0;
	for (const Node& node : nodes)
		n += node.gpus_free;
	return n;
}

const char* action_kind_name(ActionKind kind)
{
	switch (kind) {
		case ActionKind::kSetPriority:
			return "set-priority";
		case ActionKind::kStart:
			return "start";
		case ActionKind::kResize:
			return "resize";
		case ActionKind::kRequeue:
			return "requeue";
		case ActionKind::kLoan:
			return "loan";
		case ActionKind::kReclaim:
			return "reclaim";
		case ActionKind::kAdmission:
			return "admission";
	}
	return "unknown";
}

}  // namespace dlsched
