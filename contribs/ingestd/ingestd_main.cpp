// dlsched-ingestd: the small HTTP service beside slurmctld that receives the nodes' profiling
// records (doc/protocol.md, section 2) and is the single writer of the job-profile database
// (dlsched-ingestd(8)).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <string>

#include "http_server.h"
#include "ingest_service.h"
#include "log.h"
#include "munge_auth.h"
#include "owner_lookup.h"
#include "profiledb/profile_db.h"
#include "util/csv.h"
#include "util/flag_table.h"
#include "util/slurm_conf.h"
#include "workload/workload.h"

using namespace dlsched;
using namespace dlsched::ingest;

namespace {

// --help: this line, the flag table's options (ingestd_flags), then kUsageTail.
const char kUsage[] = "usage: dlsched-ingestd [OPTIONS]\n";
const char kUsageTail[] = "Runs in the foreground; SIGTERM or SIGINT stop it after the request in flight.\n";

constexpr std::size_t kMinRequest = 1024, kMaxRequest = 16 << 20;
constexpr double kStopGraceS = 10;

#ifdef DLSCHED_WITH_LIBSLURM
const char kDefaultLookup[] = "slurm";
#else
const char kDefaultLookup[] = "db-only";
#endif

struct Options {
	std::string listen = "127.0.0.1:6820";
	Limits limits;
	ServerLimits server;
	std::string db;
	std::string slurm_user = "0";
	std::string munge_socket;
	std::string owner_lookup = kDefaultLookup;
	double job_info_ttl_s = 120;
	std::string profiles;  // --profiles: model profiles bound a model no other user ran
	double profile_time_scale = 1;
	std::string pid_file;
	std::string log_file;
	bool verbose = false;
};

// Every option: what it takes, its range, where its value goes and its --help line.
FlagTable ingestd_flags(Options& o)
{
	return FlagTable({
		string_flag("--listen", "ADDR:PORT",
			    "address to listen on, only that one (default 127.0.0.1:6820; port 0: any)",
			    &o.listen),
		string_flag("--db", "FILE",
			    "the profile DB (default $DLSCHED_PROFILE_DB, else /var/lib/dlsched/profiles.db)",
			    &o.db),
		string_flag("--cluster", "NAME",
			    "the cluster whose batches are stored (default: ClusterName in\n"
			    "$SLURM_CONF, else /etc/slurm/slurm.conf); others: 403 wrong_cluster",
			    &o.limits.cluster),
		string_flag("--slurm-user", "NAME|UID", "may report for any job (default: root only)",
			    &o.slurm_user),
		string_flag("--munge-socket", "PATH", "munged's socket (default: munge's own)",
			    &o.munge_socket),
		whole_flag("--max-request", "BYTES", "larger bodies are answered 413 (default 262144)",
			   &o.server.max_request, static_cast<long long>(kMinRequest),
			   static_cast<long long>(kMaxRequest)),
		value_flag("--owner-lookup", "MODE",
			   "slurm: ask slurmctld for a job's owner; db-only: the DB only\n"
			   "(default: slurm when built with libslurm, else db-only)",
			   [&o](const std::string& v) {
				   if (v != "slurm" && v != "db-only")
					   return invalid_argument(v + ": give slurm or db-only");
				   o.owner_lookup = v;
				   return Status::ok();
			   }),
		number_flag("--rate-limit", "N",
			    "batches per second per uid (default 20; more: 429 with Retry-After)",
			    &o.limits.rate_per_s, 0.01, 1e6),
		whole_flag("--rate-burst", "N", "batches a uid may send at once after a pause (default 100)",
			   &o.limits.rate_burst, 1, 1000000),
		whole_flag("--row-quota", "N",
			   "records per uid per hour (default 20000; more: 429 with Retry-After)",
			   &o.limits.row_quota, 1, 1000000000000LL),
		number_flag("--unknown-job-ttl", "S",
			    "remember a job Slurm does not know for S seconds (default 60; 0: off)",
			    &o.limits.unknown_job_ttl_s, 0, 86400),
		whole_flag("--unknown-job-cache", "N", "remember at most N such jobs (default 4096)",
			   &o.limits.unknown_job_cache, 0, 10000000),
		number_flag("--job-info-ttl", "S",
			    "keep what Slurm said of a job for S seconds (default 120)", &o.job_info_ttl_s, 0,
			    3600),
		number_flag("--lookup-rate", "N",
			    "new Slurm lookups per second per uid (default 2; more: 503)",
			    &o.limits.lookup_rate_per_s, 0.01, 1e6),
		whole_flag("--lookup-burst", "N",
			   "lookups a uid may start at once after a pause (default 20)",
			   &o.limits.lookup_burst, 1, 1000000),
		number_flag("--clock-skew", "S",
			    "tolerance of the records' times against Slurm's (default 60)",
			    &o.limits.clock_skew_s, 0, 86400),
		string_flag("--profiles", "DIR",
			    "the site's model profiles (models.csv): a job of a model no other\n"
			    "user ran is held to a twentieth of its profile's epoch time (default:\n"
			    "none; a cluster whose GPUs the profiles do not describe leaves it out)",
			    &o.profiles),
		number_flag("--profile-time-scale", "X",
			    "the profiles' times run X times faster here (an emulated cluster\n"
			    "replaying a trace X times faster; default 1)",
			    &o.profile_time_scale, 1e-3, 1e6),
		whole_flag("--max-connections", "N", "open connections in all (default 256)",
			   &o.server.max_connections, 1, 65536),
		whole_flag("--max-connections-per-ip", "N",
			   "open connections from one address (default 16; more are closed)",
			   &o.server.max_per_ip, 1, 65536),
		string_flag("--pid-file", "FILE", "write the process id there", &o.pid_file),
		string_flag("--log-file", "FILE", "log there (default: standard error); SIGHUP reopens it",
			    &o.log_file),
		switch_flag("--verbose", "log every accepted batch too", &o.verbose, "-v"),
	});
}

void print_help(std::FILE* to)
{
	Options o;
	std::fprintf(to, "%s%s%s", kUsage, ingestd_flags(o).options_help().c_str(), kUsageTail);
}

int usage_error(const std::string& msg)
{
	std::fprintf(stderr, "dlsched-ingestd: %s\n", msg.c_str());
	print_help(stderr);
	return 2;
}

int fail(const std::string& msg)
{
	std::fprintf(stderr, "dlsched-ingestd: %s\n", msg.c_str());
	return 1;
}

double wall_clock()
{
	timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// Parses argv into `o`; returns -1 to go on, else the exit status.
int parse_options(int argc, char** argv, Options& o)
{
	const char* env = std::getenv("DLSCHED_PROFILE_DB");
	o.db = env && *env ? env : "/var/lib/dlsched/profiles.db";
	FlagTable flags = ingestd_flags(o);  // none is repeatable
	if (Status st = flags.parse(argc, argv); !st.is_ok())
		return usage_error(st.message());
	if (flags.help_asked()) {
		print_help(stdout);
		return 0;
	}
	if (o.db.empty())
		return usage_error("--db: give the profile DB's path");
	if (o.limits.cluster.empty())
		o.limits.cluster = slurm_conf_value("ClusterName");
	if (o.limits.cluster.empty())
		return usage_error(
			"--cluster: give the cluster whose batches this service stores (slurm.conf's "
			"ClusterName, which SLURM_CONF's file does not say)");
	return -1;
}

Status write_pid_file(const std::string& path)
{
	std::FILE* f = std::fopen(path.c_str(), "w");
	if (!f)
		return io_error("--pid-file " + path + ": " + std::strerror(errno));
	std::fprintf(f, "%ld\n", static_cast<long>(getpid()));
	if (std::fclose(f) != 0)
		return io_error("--pid-file " + path + ": " + std::strerror(errno));
	return Status::ok();
}

}  // namespace

int main(int argc, char** argv)
{
	Options o;
	const int rc = parse_options(argc, argv, o);
	if (rc >= 0)
		return rc;

	// The signals are taken by sigwait() below; blocked before libmicrohttpd's thread starts, so
	// that the thread inherits the mask and never takes them itself.
	sigset_t stop_signals;
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
	signal(SIGPIPE, SIG_IGN);

	Log log;
	log.set_verbose(o.verbose);
	Status st = log.open(o.log_file);
	if (!st.is_ok())
		return fail(st.message());

	auto listen = parse_listen(o.listen);
	if (!listen.is_ok())
		return fail(listen.status().message());
	auto slurm_uid = parse_user(o.slurm_user, "--slurm-user");
	if (!slurm_uid.is_ok())
		return fail(slurm_uid.status().message());
	std::unique_ptr<OwnerLookup> lookup;
	if (o.owner_lookup == "slurm") {
#ifdef DLSCHED_WITH_LIBSLURM
		auto l = make_slurm_owner_lookup(o.job_info_ttl_s);
		if (!l.is_ok())
			return fail(l.status().message());
		lookup = std::move(l.value());
#else
		return fail(
			"--owner-lookup slurm: this dlsched-ingestd was built without libslurm (install "
			"libslurm-dev and rebuild), or use --owner-lookup db-only");
#endif
	}
	auto auth = MungeAuth::create(o.munge_socket);
	if (!auth.is_ok())
		return fail(auth.status().message());
	// munged may come up later: until then every batch is answered 503 and the collectors retry.
	st = auth.value()->check();
	if (!st.is_ok())
		log.error(st.message() + "; batches are answered 503 until munged answers (--munge-socket?)");
	auto db = db::ProfileDb::open_writer(o.db);
	if (!db.is_ok())
		return fail(db.status().message());

	IngestService service(std::move(db.value()), *auth.value(), lookup.get(), slurm_uid.value(), log,
			      &wall_clock, o.limits);
	if (!o.profiles.empty()) {
		auto models = load_model_catalog(o.profiles);
		if (!models.is_ok())
			return fail("--profiles " + o.profiles + ": " + models.status().message());
		std::map<std::string, double> epoch_s;
		for (int i = 0; i < models->size(); ++i)
			epoch_s[models->at(i).name] = models->epoch_time_1gpu(i) / o.profile_time_scale;
		log.info("model profiles from " + o.profiles + ": " + std::to_string(epoch_s.size()) +
			 " models bound jobs of a model no other user ran");
		service.set_profile_epochs(std::move(epoch_s));
	}
	auto server = HttpServer::start(listen.value(), o.server, service, log);
	if (!server.is_ok())
		return fail(server.status().message());
	if (!o.pid_file.empty()) {
		st = write_pid_file(o.pid_file);
		if (!st.is_ok()) {
			server.value()->stop(0);
			return fail(st.message());
		}
	}
	// The one line a starter waits for (with port 0 it says which port was taken).
	std::string where = listen->text.substr(0, listen->text.rfind(':')) + ":" +
			    std::to_string(server.value()->port());
	std::printf("dlsched-ingestd: listening on %s\n", where.c_str());
	std::fflush(stdout);
	log.info("listening on " + where + " (cluster " + o.limits.cluster + ", db " + o.db +
		 ", owner lookup " + o.owner_lookup + ", SlurmUser uid " + std::to_string(slurm_uid.value()) +
		 ", max request " + std::to_string(o.server.max_request) + " bytes, " +
		 std::to_string(o.limits.rate_per_s) + " batches/s and " +
		 std::to_string(o.limits.row_quota) + " records/h per uid, " +
		 std::to_string(o.server.max_per_ip) + " connections per address)");

	for (;;) {
		int sig = 0;
		if (sigwait(&stop_signals, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			Status r = log.reopen();
			if (!r.is_ok())
				log.error(r.message());
			continue;
		}
		log.info(std::string("stopping on ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT"));
		break;
	}
	server.value()->stop(kStopGraceS);
	if (!o.pid_file.empty())
		unlink(o.pid_file.c_str());
	log.info("stopped: " + std::to_string(service.batches_accepted()) + " batch(es) accepted, " +
		 std::to_string(service.refused_total()) + " refused");
	return 0;
}
