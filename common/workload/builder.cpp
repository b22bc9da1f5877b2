// The workload builder: from trace rows to runnable Jobs. Documented in doc/workload-format.md.
#include <algorithm>
#include <cmath>

#include "util/random.h"
#include "workload/trace.h"

namespace dlsched {

namespace {

// Streams of the seed (util/random.h): independent, so that options do not disturb each other.
enum Stream : std::uint64_t {
	kModelStream = 1,
	kElasticStream = 2,
	kDeadlineStream = 3,
	kPriorityStream = 4
};

// Philly jobs have no model. As Pollux's trace builder does, we choose by GPU-time: short jobs get
// small models, long jobs big ones, uniformly (seeded) within the bucket among the models the catalog
// has. Thresholds: 1 and 10 GPU-hours.
int assign_model(const TraceJob& j, const ModelCatalog& models, Rng& rng)
{
	static const std::vector<std::vector<const char*>> kBuckets = {
		{"cifar10", "ncf"}, {"deepspeech2", "yolov3"}, {"imagenet", "bert"}};
	const double gpu_hours = j.duration_s * j.gpus / 3600.0;
	const std::size_t bucket = gpu_hours < 1 ? 0 : gpu_hours < 10 ? 1 : 2;
	std::vector<int> choice;
	for (const char* name : kBuckets[bucket])
		if (models.find(name) >= 0)
			choice.push_back(models.find(name));
	if (choice.empty())
		for (int m = 0; m < models.size(); ++m)
			choice.push_back(m);
	return choice.empty() ? -1 : choice[rng.below(choice.size())];
}

std::string known_models(const ModelCatalog& models)
{
	std::string s;
	for (int m = 0; m < models.size(); ++m)
		s += (m ? ", " : "") + models.at(m).name;
	return s;
}

// Target length of one epoch when a trace gives only a duration: long enough that per-epoch
// overheads stay small, short enough that progress is reported often.
constexpr double kTargetEpochS = 300;

}  // namespace

Status build_jobs(const TraceReadResult& trace, const BuildOptions& opt, const ModelCatalog& models,
		  Workload& out)
{
	if (opt.load_scale <= 0)
		return invalid_argument("load scale must be positive");
	std::vector<const TraceJob*> rows;
	rows.reserve(trace.jobs.size());
	for (const TraceJob& t : trace.jobs)
		rows.push_back(&t);
	std::stable_sort(rows.begin(), rows.end(),
			 [](const TraceJob* a, const TraceJob* b) { return a->submit_s < b->submit_s; });
	if (opt.max_jobs && rows.size() > opt.max_jobs)
		rows.resize(opt.max_jobs);
	if (rows.empty())
		return parse_error(out.source + ": no jobs in the workload");

	Rng model_rng(opt.seed, kModelStream);
	Rng elastic_rng(opt.seed, kElasticStream);
	Rng deadline_rng(opt.seed, kDeadlineStream);
	Rng priority_rng(opt.seed, kPriorityStream);
	const double t0 = rows.front()->submit_s;
	const int per_node = std::max(1, opt.gpus_per_node);
	out.jobs.reserve(rows.size());
	out.trace_runtime_s.reserve(rows.size());

	for (std::size_t i = 0; i < rows.size(); ++i) {
		const TraceJob& t = *rows[i];
		Job j;
		j.id = static_cast<JobId>(i + 1);
		j.submit_time = (t.submit_s - t0) / opt.load_scale;
		j.user = t.user;
		j.account = t.account.empty() ? t.user : t.account;
		j.qos = t.qos;
		j.partition = t.partition;
		j.gpus_requested = t.gpus;

		if (t.model.empty()) {
			j.model = assign_model(t, models, model_rng);
		} else {
			j.model = models.find(t.model);
			if (j.model < 0)
				return parse_error((t.model_where.empty() ? t.where : t.model_where) +
						   ": unknown model '" + t.model +
						   "' (known: " + known_models(models) + ")");
		}
		const int nodes = (t.gpus + per_node - 1) / per_node;
		const double speedup = models.speedup(j.model, t.gpus, nodes);

		// Length: epochs and seconds per epoch on one reference GPU.
		if (t.epochs > 0 && t.epoch_s > 0) {
			j.epochs_total = t.epochs;
			j.epoch_time_1gpu = t.epoch_s * speedup;
		} else if (t.duration_s > 0) {
			j.epochs_total = t.epochs > 0 ? t.epochs
						      : std::clamp(std::round(t.duration_s / kTargetEpochS),
								   1.0, 1000.0);
			j.epoch_time_1gpu = t.duration_s * speedup / j.epochs_total;
		} else {
			// Pollux workloads: the model's reference run, at its measured single-GPU throughput.
			const double epoch = models.epoch_time_1gpu(j.model);
			if (!(epoch > 0) || models.at(j.model).reference_epochs <= 0)
				return parse_error(t.where +
						   ": no duration and no reference run for model '" +
						   t.model + "'");
			j.epochs_total = models.at(j.model).reference_epochs;
			j.epoch_time_1gpu = epoch;
		}
		const double runtime = j.epochs_total * j.epoch_time_1gpu / speedup;

		// Elasticity: explicit in the trace, or a seeded fraction of the jobs.
		j.gpus_min = t.min_gpus ? t.min_gpus : t.gpus;
		j.gpus_max = t.max_gpus ? t.max_gpus : t.gpus;
		const bool make_elastic = elastic_rng.uniform() < opt.elastic_fraction;
		if (make_elastic && !t.min_gpus && !t.max_gpus) {
			j.gpus_min = 1;
			j.gpus_max = std::min(
				ModelCatalog::kMaxGpus,
				std::max(t.gpus,
					 static_cast<int>(std::ceil(opt.elastic_max_factor * t.gpus))));
		}

		// Priority class: a seeded fraction of the jobs the trace gives no QoS get the QoS "high".
		const bool make_high = priority_rng.uniform() < opt.priority_fraction;
		if (make_high && j.qos.empty())
			j.qos = "high";

		// Deadlines: from the trace, or a seeded fraction of the jobs, at a slack (fixed or drawn
		// per job) times the runtime at the requested size. Generated ones carry the QoS
		// "deadline" when the trace gives none, so that by_qos reports them apart.
		const bool make_deadline = deadline_rng.uniform() < opt.deadline_fraction;
		if (t.deadline_s > 0) {
			j.deadline = j.submit_time + t.deadline_s;
		} else if (make_deadline) {
			// A drawn slack takes one more draw of the stream (a fixed one none, as before).
			const double slack = opt.deadline_slack_max > opt.deadline_slack
						     ? opt.deadline_slack + deadline_rng.uniform() *
										    (opt.deadline_slack_max -
										     opt.deadline_slack)
						     : opt.deadline_slack;
			j.deadline = j.submit_time + slack * runtime;
			if (j.qos.empty())
				j.qos = "deadline";
		}
		if (j.has_deadline() && opt.deadline_elastic && !t.min_gpus && !t.max_gpus) {
			j.gpus_min = 1;
			j.gpus_max = std::min(
				ModelCatalog::kMaxGpus,
				std::max(t.gpus,
					 static_cast<int>(std::ceil(opt.elastic_max_factor * t.gpus))));
		}

		// Traces carry no time limits; Slurm users over-request. Rounded up to the minute.
		j.time_limit = t.time_limit_s > 0 ? t.time_limit_s
						  : std::ceil(opt.time_limit_factor * runtime / 60.0) * 60.0;
		out.jobs.push_back(std::move(j));
		out.trace_runtime_s.push_back(runtime);
	}
	out.skipped_lines = trace.skipped_lines;
	return Status::ok();
}

}  // namespace dlsched
