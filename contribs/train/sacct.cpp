#include "sacct.h"

#include <algorithm>
#include <ctime>
#include <deque>
#include <map>
#include <unordered_map>
#include <sstream>

#include "model/cluster_view.h"
#include "model/job_metadata.h"
#include "models/features.h"
#include "util/csv.h"

namespace dlsched::train {

namespace {

std::vector<std::string> split_bar(const std::string& line)
{
	std::vector<std::string> out;
	std::string cell;
	std::stringstream ss(line);
	while (std::getline(ss, cell, '|'))
		out.push_back(cell);
	if (!line.empty() && line.back() == '|')
		out.emplace_back();
	return out;
}

// "2026-11-23T15:04:05" -> seconds (UTC arithmetic: only differences matter); -1 for Unknown/None.
double parse_time(const std::string& s)
{
	std::tm tm{};
	if (s.size() < 19 || !strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm))
		return -1;
	return static_cast<double>(timegm(&tm));
}

// "billing=4,cpu=4,gres/gpu=2,mem=..." -> 2
int gpus_of(const std::string& tres)
{
	const std::string key = "gres/gpu=";
	const std::size_t p = tres.find(key);
	if (p == std::string::npos)
		return 0;
	long long n = 0;
	std::size_t e = tres.find(',', p);
	const std::string v =
		tres.substr(p + key.size(), e == std::string::npos ? std::string::npos : e - p - key.size());
	return parse_integer(v, n) && n > 0 && n < 1000000 ? static_cast<int>(n) : 0;
}

// The jobs of sacct output that ran with GPUs, with when they ran (see sacct_rounds).
struct SacctTimes {
	double start, end;
	double claimed_epoch_time_1gpu = 0;  // the comment's epoch_time_1gpu=; 0: none
	bool epochs_given = false;           // the comment's epochs=
};
// `unfinished`: also the jobs still pending or running (Start or End Unknown: -1 in `times`), whose
// epoch time is their comment's word or 0 (unknown).
Status read_sacct(std::istream& in, const std::string& source, const ModelCatalog& models,
		  std::deque<Job>& jobs, std::vector<SacctTimes>& times, double& t0, bool unfinished = false)
{
	std::string line;
	std::size_t line_no = 0;
	std::map<std::string, int> col;
	t0 = -1;
	while (std::getline(in, line)) {
		++line_no;
		if (line.empty())
			continue;
		const std::vector<std::string> cells = split_bar(line);
		if (col.empty()) {
			for (std::size_t i = 0; i < cells.size(); ++i)
				col[cells[i]] = static_cast<int>(i);
			for (const char* need : {"JobID", "Submit", "Start", "End"})
				if (!col.count(need))
					return parse_error(
						source + ":1: no " + need +
						" column: run sacct -X -P -o "
						"JobID,Submit,Start,End,AllocTRES,ReqTRES,Comment");
			continue;
		}
		auto cell = [&](const char* name) -> std::string {
			auto it = col.find(name);
			return it == col.end() || static_cast<std::size_t>(it->second) >= cells.size()
				       ? std::string()
				       : cells[it->second];
		};
		const std::string id = cell("JobID");
		if (id.find('.') != std::string::npos)
			continue;  // a step (sacct without -X)
		const double submit = parse_time(cell("Submit")), start = parse_time(cell("Start")),
			     end = parse_time(cell("End"));
		if (submit < 0)
			return parse_error(source + ":" + std::to_string(line_no) + ": Submit '" +
					   cell("Submit") + "' is not a time (YYYY-MM-DDTHH:MM:SS)");
		int gpus = gpus_of(cell("AllocTRES"));
		if (gpus == 0)
			gpus = gpus_of(cell("ReqTRES"));
		const bool ended = start >= 0 && end >= start;
		if (gpus == 0 || (!ended && !(unfinished && (start < 0 || end < 0))))
			continue;
		long long numeric = 0;
		Job j;
		j.id = parse_integer(id.substr(0, id.find_first_of("_+")), numeric)
			       ? static_cast<JobId>(numeric)
			       : static_cast<JobId>(jobs.size() + 1);
		j.user = cell("User");
		j.submit_time = submit;
		j.gpus_requested = j.gpus_min = j.gpus_max = gpus;
		// The job's words, read as the plugins read them (model/job_metadata.h).
		JobMetadata meta;
		parse_job_words(cell("Comment"), meta);
		j.model = models.find(meta.model);
		j.epochs_total = meta.epochs > 0 ? meta.epochs : 1;
		if (col.count("Timelimit"))
			j.time_limit = sacct_time_limit(cell("Timelimit"));
		if (meta.epoch_time_1gpu > 0)
			j.epoch_time_1gpu = meta.epoch_time_1gpu;
		else if (ended)  // no profile: the run itself, as one epoch at its size (what backfill would
				 // know is the limit)
			j.epoch_time_1gpu = (end - start) * gpus;
		else
			j.epoch_time_1gpu = 0;
		jobs.push_back(j);
		times.push_back({start, end, meta.epoch_time_1gpu, meta.epochs > 0});
		t0 = t0 < 0 ? submit : std::min(t0, submit);
	}
	if (col.empty())
		return parse_error(source + ": empty: expected sacct -P output with a header line");
	return Status::ok();
}

}  // namespace

Result<std::vector<PolicyStep>> sacct_rounds(std::istream& in, const std::string& source,
					     const ModelCatalog& models, const std::vector<Node>& nodes,
					     std::size_t window, double time_scale)
{
	std::deque<Job> jobs;
	std::vector<SacctTimes> times;
	double t0 = -1;
	Status st = read_sacct(in, source, models, jobs, times, t0);
	if (!st.is_ok())
		return st;
	// Rounds: every distinct start time.
	std::vector<double> starts;
	for (const SacctTimes& t : times)
		starts.push_back(t.start);
	std::sort(starts.begin(), starts.end());
	starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
	int total = 0;
	for (const Node& n : nodes)
		total += n.gpus_total;
	std::vector<PolicyStep> out;
	for (double t : starts) {
		std::vector<Job> snapshot;
		std::vector<bool> started_now;
		int busy = 0;
		for (std::size_t i = 0; i < jobs.size(); ++i) {
			const Job& j = jobs[i];
			if (j.submit_time > t || times[i].end <= t)
				continue;
			Job s = j;
			s.submit_time -= t0;
			if (times[i].start < t) {  // running before this moment
				s.state = JobState::kRunning;
				s.gpus_allocated = s.gpus_requested;
				s.start_time = s.first_start_time = times[i].start - t0;
				const double ran = t - times[i].start;
				s.epochs_done =
					std::min(s.epochs_total,
						 ran / std::max(1.0, s.epoch_time_1gpu / s.gpus_requested));
				s.attained_gpu_s = ran * s.gpus_requested;
				s.executed_s = ran;
				busy += s.gpus_requested;
			}
			snapshot.push_back(s);
			started_now.push_back(times[i].start == t);
		}
		ClusterView view;
		view.now = t - t0;
		view.nodes = Span<const Node>(nodes.data(), nodes.size());
		view.models = &models;
		std::vector<const Job*> cands;
		for (const Job& s : snapshot) {
			(s.running() ? view.running : view.pending).push_back(&s);
			cands.push_back(&s);
		}
		std::sort(view.pending.begin(), view.pending.end(), [](const Job* a, const Job* b) {
			return a->submit_time != b->submit_time ? a->submit_time < b->submit_time
								: a->id < b->id;
		});
		std::vector<const Job*> ordered = view.running;
		ordered.insert(ordered.end(), view.pending.begin(), view.pending.end());
		std::vector<const Job*> rest;
		// All the cluster's GPUs are handed out: running jobs keep theirs (picked first), then the
		// starts, each at the GPUs it ran with; the round ends there.
		models::EncodedWindow w = models::encode_window(view, ordered, std::max(0, total), window,
								rest, /*units=*/true, time_scale);
		std::unordered_map<JobId, std::size_t> rank;
		std::unordered_map<JobId, int> sizes;
		for (std::size_t i = 0; i < snapshot.size(); ++i) {
			if (snapshot[i].running() || started_now[i])
				sizes[snapshot[i].id] = snapshot[i].gpus_requested;
			rank[snapshot[i].id] = snapshot[i].running() ? 0 : (started_now[i] ? 1 : 2);
		}
		std::vector<int> order = models::picks_for_sizes(view, w, sizes, rank);
		if (!order.empty())
			out.push_back(models::make_step(view, std::move(w), std::move(order)));
	}
	return out;
}

Result<std::size_t> sacct_workload(std::istream& in, const std::string& source, const ModelCatalog& models,
				   std::ostream& out, double time_scale)
{
	std::deque<Job> jobs;
	std::vector<SacctTimes> times;
	double t0 = -1;
	Status st = read_sacct(in, source, models, jobs, times, t0);
	if (!st.is_ok())
		return st;
	if (jobs.empty())
		return invalid_argument(
			source +
			": no job that started and ended with GPUs (gres/gpu= in AllocTRES or "
			"ReqTRES): nothing to build a workload from");
	out << "id,submit_s,gpus,model,epochs,duration_s,user\n";
	out.precision(12);
	for (std::size_t i = 0; i < jobs.size(); ++i) {
		const Job& j = jobs[i];
		const double duration = std::max(1.0, (times[i].end - times[i].start) * time_scale);
		int model = j.model;
		if (model <
		    0) {  // no model= word: by GPU-hours, small, medium or large (doc/workload-format.md)
			const double gpu_hours = duration * j.gpus_requested / 3600.0;
			const char* const pick = gpu_hours < 1    ? "cifar10"
						 : gpu_hours < 10 ? "yolov3"
								  : "imagenet";
			model = models.find(pick) >= 0 ? models.find(pick) : 0;
		}
		if (model >= models.size())
			return invalid_argument(source +
						": the model catalog is empty (check DLSCHED_DATADIR)");
		// A user's name never holds a comma or a quote in Slurm; anything else is dropped.
		std::string user;
		for (char c : j.user)
			if (c != ',' && c != '"' && c != '\n' && c != '\r')
				user += c;
		out << j.id << ',' << (j.submit_time - t0) * time_scale << ',' << j.gpus_requested << ','
		    << models.at(model).name << ',' << std::max(1.0, j.epochs_total) << ',' << duration << ','
		    << user << '\n';
	}
	return jobs.size();
}

double sacct_time_limit(const std::string& cell)
{
	// [D-]HH:MM:SS, MM:SS or MM (sacct's Timelimit).
	long long days = 0, parts[3] = {0, 0, 0};
	std::string rest = cell;
	const std::size_t dash = rest.find('-');
	if (dash != std::string::npos) {
		if (!parse_integer(rest.substr(0, dash), days) || days < 0)
			return kNoTimeLimit;
		rest = rest.substr(dash + 1);
	}
	std::vector<std::string> fields;
	std::stringstream ss(rest);
	std::string f;
	while (std::getline(ss, f, ':'))
		fields.push_back(f);
	if (fields.empty() || fields.size() > 3 || (dash != std::string::npos && fields.size() != 3))
		return kNoTimeLimit;
	for (std::size_t i = 0; i < fields.size(); ++i)
		if (!parse_integer(fields[i], parts[i]) || parts[i] < 0 || parts[i] > 1000000)
			return kNoTimeLimit;
	double s = 0;
	if (fields.size() == 3)
		s = parts[0] * 3600.0 + parts[1] * 60.0 + parts[2];
	else if (fields.size() == 2)
		s = parts[0] * 60.0 + parts[1];
	else
		s = parts[0] * 60.0;  // minutes
	s += days * 86400.0;
	return s > 0 ? s : kNoTimeLimit;
}

Result<std::vector<SacctGuardJob>> sacct_guard_jobs(std::istream& in, const std::string& source,
						    const ModelCatalog& models, double now)
{
	std::deque<Job> jobs;
	std::vector<SacctTimes> times;
	double t0 = -1;
	Status st = read_sacct(in, source, models, jobs, times, t0, true);
	if (!st.is_ok())
		return st;
	std::vector<SacctGuardJob> out;
	for (std::size_t i = 0; i < jobs.size(); ++i) {
		if (jobs[i].submit_time > now)
			continue;  // not submitted yet
		SacctGuardJob g;
		g.job = jobs[i];
		// Its length is a claim (the comment) or unknown: never the run read_sacct measured.
		g.job.epoch_time_1gpu = times[i].claimed_epoch_time_1gpu;
		g.epochs_given = times[i].epochs_given;
		if (times[i].start >= 0 && times[i].start <= now) {
			g.start = times[i].start;
			if (times[i].end >= times[i].start && times[i].end <= now)
				g.end = times[i].end;
		}
		out.push_back(std::move(g));
	}
	return out;
}

}  // namespace dlsched::train
