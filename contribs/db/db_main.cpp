// dlsched-db: inspect and maintain the job-profile database (dlsched-db(1)).
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "accuracy.h"
#include "profiledb/profile_db.h"
#include "util/csv.h"
#include "util/flag_table.h"

using namespace dlsched;
using namespace dlsched::db;

namespace {

const char kUsage[] =
	"usage: dlsched-db [--db FILE] COMMAND [ARGS]\n"
	"  init                 create the database, or upgrade an older schema (as its writer)\n"
	"  version              the schema version of the file and of this dlsched\n"
	"  check                integrity check; exit 1 if the file is damaged or not a profile DB\n"
	"  models               models with their number of profiled jobs\n"
	"  job ID [--cluster C] a job's record, epochs, checkpoints and preemptions\n"
	"  export TABLE         jobs, epochs, checkpoints or preemptions as CSV on standard output\n"
	"  vacuum               reclaim free space (as its writer)\n"
	"  backup FILE          a consistent copy into the new FILE while the writer runs\n"
	"  accuracy [--json]    benchmark: runtime MAPE after 1, 2, 4, 8 same-model jobs, overhead error\n"
	"           [--each]    (--profiles DIR: the model catalog, default the bundled one; --each: every\n"
	"                       preemption, predicted against measured)\n";

int fail(const Status& st)
{
	std::fprintf(stderr, "dlsched-db: %s\n", st.message().c_str());
	return 1;
}

int usage_error(const std::string& msg)
{
	std::fprintf(stderr, "dlsched-db: %s\n%s", msg.c_str(), kUsage);
	return 2;
}

void print_job(const JobProfile& p)
{
	const JobRecord& j = p.job;
	std::printf("job %lld%s%s: model %s, user %s, %d GPU(s) on %d node(s), %g epochs, state %s\n",
		    static_cast<long long>(j.job_id), j.cluster.empty() ? "" : " on ", j.cluster.c_str(),
		    j.model.empty() ? "(unknown)" : j.model.c_str(), j.user.c_str(), j.gpus, j.nodes,
		    j.epochs_total, j.state.empty() ? "-" : j.state.c_str());
	std::printf("%6s %4s %5s %10s %14s %14s %14s\n", "epoch", "run", "gpus", "seconds", "bytes read",
		    "net rx", "nfs read");
	for (const EpochRecord& e : p.epochs)
		std::printf("%6d %4d %5d %10.3f %14lld %14lld %14lld\n", e.epoch, e.run, e.gpus, e.seconds(),
			    static_cast<long long>(e.bytes_read), static_cast<long long>(e.net_rx_bytes),
			    static_cast<long long>(e.nfs_read_bytes));
	if (!p.checkpoints.empty()) {
		std::printf("%6s %4s %8s %14s %10s\n", "ckpt", "run", "epoch", "bytes", "seconds");
		for (const CheckpointRecord& c : p.checkpoints)
			std::printf("%6s %4d %8.3f %14lld %10.3f\n", c.kind.c_str(), c.run, c.epoch,
				    static_cast<long long>(c.bytes), c.seconds);
	}
	if (!p.preemptions.empty()) {
		std::printf("%-16s %8s %5s %12s %12s %-13s %10s  %s\n", "preempted at", "grace", "gpus",
			    "pred. susp.", "pred. resume", "outcome", "requeued", "why");
		for (const PreemptionRecord& r : p.preemptions)
			std::printf("%-16.3f %8.0f %5d %12.3f %12.3f %-13s %10.3f  %s\n", r.requested_s,
				    r.grace_s, r.gpus, r.predicted_suspend_s, r.predicted_resume_s,
				    r.outcome.empty() ? "-" : r.outcome.c_str(),
				    r.requeued_s > 0 ? r.requeued_s - r.requested_s : 0.0, r.reason.c_str());
	}
}

}  // namespace

int main(int argc, char** argv)
{
	const char* env = std::getenv("DLSCHED_PROFILE_DB");
	std::string path = env && *env ? env : "/var/lib/dlsched/profiles.db";
	std::string cluster, profiles;
	bool json = false, each = false;
	std::vector<std::string> args;
	// The flags; --help lists them after the commands they serve (kUsage).
	FlagTable flags({
		string_flag(
			"--db", "FILE",
			"the profile DB (default $DLSCHED_PROFILE_DB, else\n/var/lib/dlsched/profiles.db)",
			&path),
		string_flag("--cluster", "C", "job: the cluster of the job id", &cluster),
		string_flag("--profiles", "DIR", "accuracy: the model catalog", &profiles),
		switch_flag("--json", "accuracy: JSON", &json),
		switch_flag("--each", "accuracy: every preemption", &each),
	});
	if (Status st = flags.parse(argc, argv, 1, &args); !st.is_ok())
		return usage_error(st.message());
	if (flags.help_asked()) {
		std::printf("%s\noptions:\n%s", kUsage, flags.options_help().c_str());
		return 0;
	}
	if (args.empty())
		return usage_error("no command given");
	const std::string cmd = args[0];
	const std::size_t want = cmd == "job" || cmd == "export" || cmd == "backup" ? 2 : 1;
	if (args.size() != want)
		return usage_error(cmd + (want == 2 ? " takes one argument" : " takes no argument"));

	if (cmd == "init" || cmd == "vacuum") {
		auto db = ProfileDb::open_writer(path);
		if (!db.is_ok())
			return fail(db.status());
		if (cmd == "vacuum") {
			Status st = db->vacuum();
			if (!st.is_ok())
				return fail(st);
		}
		std::printf("%s: schema version %d (%s)\n", path.c_str(), db->schema_version(),
			    cmd == "init" ? "ready" : "vacuumed");
		return 0;
	}
	auto db = ProfileDb::open_reader(path);
	if (!db.is_ok())
		return fail(db.status());
	if (cmd == "version") {
		std::printf("%s: schema version %d; this dlsched writes version %d%s\n", path.c_str(),
			    db->schema_version(), ProfileDb::kSchemaVersion,
			    db->schema_version() < ProfileDb::kSchemaVersion
				    ? " (dlsched-db init upgrades it)"
				    : "");
		return 0;
	}
	if (cmd == "backup") {
		Status st = db->backup(args[1]);
		if (!st.is_ok())
			return fail(st);
		std::printf("%s: copied to %s (schema version %d)\n", path.c_str(), args[1].c_str(),
			    db->schema_version());
		return 0;
	}
	if (cmd == "check") {
		std::printf("%s: ok (schema version %d)\n", path.c_str(), db->schema_version());
		return 0;
	}
	if (cmd == "models") {
		auto m = db->models();
		if (!m.is_ok())
			return fail(m.status());
		std::printf("%-20s %6s\n", "model", "jobs");
		for (const auto& [name, n] : *m)
			std::printf("%-20s %6d\n", name.empty() ? "(unknown)" : name.c_str(), n);
		return 0;
	}
	if (cmd == "job") {
		long long id = 0;
		if (!parse_integer(args[1], id) || id < 0)
			return usage_error("job ID '" + args[1] + "' is not a job id");
		auto p = db->job(cluster, id, 0);
		if (!p.is_ok())
			return fail(p.status());
		print_job(*p);
		return 0;
	}
	if (cmd == "accuracy")
		return run_accuracy(*db, profiles, json, each);
	if (cmd == "export") {
		Status st = db->export_csv(args[1], std::cout);
		if (!st.is_ok())
			return fail(st);
		return 0;
	}
	return usage_error("unknown command '" + cmd + "'");
}
