// Recorded cycles (DumpViews=, common/capi/dump.h): dlsched_scheduler_decide() writes each cycle's
// view and decisions as a JSON file, keeps the last kDumpViewsKept, and goes on when the directory
// cannot be written; dlsched_replay() decides a recording again on another scheduler and gets the
// recorded decisions.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "capi/dump.h"
#include "dlsched/api.h"
#include "json/json.h"
#include "profiledb/profile_db.h"
#include "temp_path.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;

namespace {

std::string temp_path(const char* name)
{
	return test::temp_path("dlsched-dump-test", name);
}

std::string fresh_dir(const char* name)
{
	const std::string d = temp_path(name);
	ck_assert_int_eq(mkdir(d.c_str(), 0755), 0);
	return d;
}

dlsched_scheduler_t* scheduler(const std::string& conf_text)
{
	const std::string p = temp_path("dlsched.conf");
	{
		std::ofstream f(p);
		f << conf_text << "\nModelProfiles=" << DLSCHED_PROFILES << "\n";
	}
	dlsched_scheduler_t* s = nullptr;
	dlsched_error_t err;
	ck_assert_msg(dlsched_scheduler_create(p.c_str(), &s, &err) == DLSCHED_OK, "%s", err.message);
	return s;
}

std::vector<std::string> files(const std::string& dir)
{
	std::vector<std::string> out;
	DIR* d = opendir(dir.c_str());
	ck_assert_ptr_nonnull(d);
	while (const dirent* e = readdir(d))
		if (e->d_name[0] != '.')
			out.push_back(e->d_name);
	closedir(d);
	std::sort(out.begin(), out.end());
	return out;
}

std::string read(const std::string& path)
{
	std::ifstream in(path);
	std::ostringstream s;
	s << in.rdbuf();
	return s.str();
}

// Two 4-GPU nodes; job 41 runs 4 GPUs on n1 (a known model, 8 GPUs' worth of time left), job 42
// (high QoS) and 43 wait for 4 and 8 GPUs.
struct CView {
	dlsched_node_view_t nodes[2]{};
	dlsched_share_t share{0, 4};
	dlsched_job_view_t jobs[3]{};
	dlsched_cluster_view_t view{};

	CView(std::uint64_t cycle, double now)
	{
		const char* names[] = {"n1", "n2"};
		for (int i = 0; i < 2; ++i) {
			dlsched_node_view_t& n = nodes[i];
			n.struct_size = sizeof n;
			n.name = names[i];
			n.gpus_total = 4;
			n.gpus_free = i == 0 ? 0 : 4;
			n.gpu_type = "a100";
			n.partition = "train";
			n.up = 1;
		}
		for (int i = 0; i < 3; ++i) {
			dlsched_job_view_t& j = jobs[i];
			j.struct_size = sizeof j;
			j.job_id = static_cast<std::uint32_t>(41 + i);
			j.user = i == 2 ? "bob" : "alice";
			j.qos = i == 1 ? "high" : "normal";
			j.model = i == 2 ? "no-such-model" : "resnet18";
			j.submit_time = 10.25 * i;
			j.gpus_requested = i == 2 ? 8 : 4;
			j.epochs_total = 10;
			j.epochs_done = -1;
			j.time_limit = 7200;
			j.last_stop_time = -1;
			j.requeueable = 1;
		}
		jobs[0].state = DLSCHED_RUNNING;
		jobs[0].gpus_allocated = 4;
		jobs[0].shares = &share;
		jobs[0].share_count = 1;
		jobs[0].start_time = now - 333.3;
		jobs[0].executed_s = 333.3;
		view.struct_size = sizeof view;
		view.now = now;
		view.cycle = cycle;
		view.nodes = nodes;
		view.node_count = 2;
		view.jobs = jobs;
		view.job_count = 3;
		view.inference_demand = 1;
		view.requeue_delay = 121;
	}
};

std::string decide(dlsched_scheduler_t* s, const CView& v)
{
	dlsched_decisions_t* d = nullptr;
	dlsched_error_t err;
	ck_assert_msg(dlsched_scheduler_decide(s, &v.view, &d, &err) == DLSCHED_OK, "%s", err.message);
	const std::string out = capi::decisions_json(d).dump(1, true);
	dlsched_decisions_free(d);
	return out;
}

}  // namespace

START_TEST(each_cycle_is_written_and_replays_to_the_same_decisions)
{
	const std::string dir = fresh_dir("views");
	const std::string conf = "Policy=pickyman\nPriorityQos=high\nDumpViews=" + dir;
	dlsched_scheduler_t* s = scheduler(conf);
	char notes[1024];
	ck_assert_int_eq(dlsched_scheduler_notes(s, notes, sizeof notes), DLSCHED_OK);
	ck_assert_msg(std::strstr(notes, ("views: each cycle's view and decisions are written to " + dir +
					  "/view-*.json (the last 200 kept)")
						 .c_str()),
		      "notes: %s", notes);
	const std::string live = decide(s, CView(7, 1764230000.5));
	dlsched_scheduler_destroy(s);
	const std::vector<std::string> written = files(dir);
	ck_assert_uint_eq(written.size(), 1);
	ck_assert_str_eq(written[0].c_str(), "view-1764230000-000007.json");
	const std::string text = read(dir + "/" + written[0]);
	auto f = json::Value::parse(text, written[0]);
	ck_assert_msg(f.is_ok(), "%s", f.status().message().c_str());
	ck_assert_int_eq(static_cast<int>(*f->get("schema").as_number()), 1);
	const std::string policy = f->get("config").get("Policy").as_string().value_or("");
	ck_assert_str_eq(policy.c_str(), "pickyman");
	ck_assert_uint_eq(f->get("view").get("jobs").size(), 3);
	ck_assert_uint_eq(f->get("prepared").size(), 3);
	// The view as the host gave it, exactly (17 digits): now, and the running job's executed time.
	ck_assert_double_eq(*f->get("view").get("now").as_number(), 1764230000.5);
	ck_assert_double_eq(*f->get("view").get("jobs").at(0).get("executed_s").as_number(), 333.3);
	// The recorded decisions are the ones the host got; the high-QoS job starts on n2.
	const std::string recorded = f->get("decisions").dump(1, true);
	ck_assert_str_eq(recorded.c_str(), live.c_str());
	ck_assert_msg(live.find("\"job_id\": 42") != std::string::npos, "decisions: %s", live.c_str());

	// A fresh scheduler (no DumpViews=, no profile DB) replays it to the same decisions.
	dlsched_scheduler_t* r = scheduler("Policy=pickyman\nPriorityQos=high");
	std::string replayed;
	dlsched_error_t err;
	ck_assert_msg(dlsched_replay(r, text, written[0], replayed, &err) == DLSCHED_OK, "%s", err.message);
	ck_assert_str_eq(replayed.c_str(), live.c_str());
	// Every job of the view must have its prepared entry: the replay reads no profile DB.
	auto changed = json::Value::parse(text, "changed");
	json::Value fewer = json::Value::array();
	fewer.push_back(changed->get("prepared").at(0));
	fewer.push_back(changed->get("prepared").at(1));
	changed->set("prepared", fewer);
	std::string other;
	ck_assert_int_eq(dlsched_replay(r, changed->dump(1, true), "changed", other, &err), DLSCHED_EINVAL);
	ck_assert_str_eq(err.message, "replay: job 43 of the view has no \"prepared\" entry");
	// A file that is not a recording says so.
	ck_assert_int_eq(dlsched_replay(r, "{\"schema\": 2}", "x.json", other, &err), DLSCHED_EPARSE);
	ck_assert_str_eq(err.message, "x.json: not a DumpViews= file of schema 1 (no \"schema\": 1)");
	json::Value broken = json::Value::parse(text, "broken").value();
	json::Value j = broken.get("view").get("jobs").at(1);
	j.set("gpus_requested", json::Value::string("four"));
	ck_assert_int_eq(dlsched_replay(r, broken.dump(1, true), "b.json", other, &err), DLSCHED_EPARSE);
	ck_assert_str_eq(err.message, "b.json: view.jobs[1].gpus_requested: missing or not a number");
	dlsched_scheduler_destroy(r);
}
END_TEST

// The jobs' accounts, the accounts and the quotas QuotaFile= gave are in the recording, and a
// replay on a scheduler without the file (gone since) decides with them: the same decisions.
START_TEST(accounts_and_quota_file_quotas_are_recorded_and_replayed)
{
	const std::string dir = fresh_dir("quota-views");
	const std::string qf = temp_path("quotas.csv");
	{
		std::ofstream f(qf);
		f << "a,2\nb,6\n";
	}
	dlsched_scheduler_t* s =
		scheduler("Policy=fifo\nFairnessPolicy=quota\nQuotaFile=" + qf + "\nDumpViews=" + dir);
	CView v(3, 1764230000.5);
	dlsched_account_view_t acc[2]{};
	const char* names[] = {"a", "b"};
	for (int i = 0; i < 2; ++i) {
		acc[i].struct_size = sizeof acc[i];
		acc[i].name = names[i];
		acc[i].quota_gpus = 4;  // the host's (shares); the file's replace them
		acc[i].shares = 1;
		acc[i].usage_gpu_s = 100.5 * i;
	}
	v.jobs[0].account = "a";
	v.jobs[1].account = "a";
	v.jobs[2].account = "b";
	v.view.accounts = acc;
	v.view.account_count = 2;
	const std::string live = decide(s, v);
	dlsched_scheduler_destroy(s);
	const std::vector<std::string> written = files(dir);
	ck_assert_uint_eq(written.size(), 1);
	const std::string text = read(dir + "/" + written[0]);
	auto f = json::Value::parse(text, written[0]);
	ck_assert_msg(f.is_ok(), "%s", f.status().message().c_str());
	ck_assert_uint_eq(f->get("quota_file").size(), 2);
	ck_assert_double_eq(*f->get("quota_file").at(1).get("gpus").as_number(), 6);
	ck_assert_uint_eq(f->get("view").get("accounts").size(), 2);
	ck_assert_double_eq(*f->get("view").get("accounts").at(1).get("usage_gpu_s").as_number(), 100.5);
	const std::string b = f->get("view").get("jobs").at(2).get("account").as_string().value_or("");
	ck_assert_str_eq(b.c_str(), "b");
	// The file's quota of b (6 GPUs), not the host's 4, is in the decisions.
	ck_assert_msg(live.find("0 of its 6 GPUs held") != std::string::npos, "decisions: %s", live.c_str());

	std::remove(qf.c_str());
	dlsched_scheduler_t* r = scheduler("Policy=fifo\nFairnessPolicy=quota");
	std::string replayed;
	dlsched_error_t err;
	ck_assert_msg(dlsched_replay(r, text, written[0], replayed, &err) == DLSCHED_OK, "%s", err.message);
	ck_assert_str_eq(replayed.c_str(), live.c_str());
	// Without the recorded quotas the host's decide, and the decisions differ.
	auto without = json::Value::parse(text, "without");
	without->set("quota_file", json::Value::null());
	ck_assert_msg(dlsched_replay(r, without->dump(1, true), "without", replayed, &err) == DLSCHED_OK,
		      "%s", err.message);
	ck_assert_msg(replayed != live, "the same decisions with the host's quotas: %s", replayed.c_str());
	// A bad entry is named.
	auto bad = json::Value::parse(text, "bad");
	json::Value e = bad->get("quota_file").at(0);
	e.set("gpus", json::Value::string("two"));
	ck_assert_int_eq(dlsched_replay(r, bad->dump(1, true), "bad.json", replayed, &err), DLSCHED_EPARSE);
	ck_assert_str_eq(err.message,
			 "bad.json: quota_file[0]: needs \"account\" (a string) and \"gpus\" (>= 0)");
	dlsched_scheduler_destroy(r);
}
END_TEST

START_TEST(the_last_200_are_kept_earlier_ones_included)
{
	const std::string dir = fresh_dir("bounded");
	// A file an earlier slurmctld left: adopted, the oldest, removed first.
	{
		std::ofstream(dir + "/view-0000000001-000001.json") << "{}\n";
		std::ofstream(dir + "/notes.txt") << "not a view\n";
	}
	dlsched_scheduler_t* s = scheduler("Policy=fifo\nDumpViews=" + dir);
	for (std::uint64_t c = 1; c <= 200; ++c)
		(void)decide(s, CView(c, 1000.0 + static_cast<double>(c)));
	std::vector<std::string> now = files(dir);
	ck_assert_uint_eq(now.size(), 201);  // 200 views and notes.txt
	ck_assert_str_eq(now[0].c_str(), "notes.txt");
	ck_assert_str_eq(now[1].c_str(), "view-0000001001-000001.json");
	ck_assert_str_eq(now[200].c_str(), "view-0000001200-000200.json");
	(void)decide(s, CView(201, 1201));
	now = files(dir);
	ck_assert_uint_eq(now.size(), 201);
	ck_assert_str_eq(now[1].c_str(), "view-0000001002-000002.json");
	dlsched_scheduler_destroy(s);
}
END_TEST

START_TEST(a_directory_it_cannot_write_costs_the_cycle_nothing)
{
	const std::string missing = temp_path("no-such-dir") + "/views";
	dlsched_scheduler_t* s = scheduler("Policy=fifo\nDumpViews=" + missing);
	char notes[1024];
	ck_assert_int_eq(dlsched_scheduler_notes(s, notes, sizeof notes), DLSCHED_OK);
	ck_assert_msg(
		std::strstr(notes, ("views: DumpViews=" + missing +
				    " is not a writable directory (No such file or directory): no views are "
				    "written; create it, or unset DumpViews=")
					   .c_str()),
		"notes: %s", notes);
	const std::string a = decide(s, CView(1, 100));
	(void)decide(s, CView(2, 101));  // and the next
	ck_assert_msg(a.find("\"kind\"") != std::string::npos, "no decisions: %s", a.c_str());
	dlsched_scheduler_destroy(s);
	// The same cycles without DumpViews= decide the same.
	dlsched_scheduler_t* plain = scheduler("Policy=fifo");
	const std::string same = decide(plain, CView(1, 100));
	ck_assert_str_eq(same.c_str(), a.c_str());
	dlsched_scheduler_destroy(plain);
}
END_TEST

// --dl-model=llama-7b, a model no profile knows: its first job is estimated from its time limit; once
// jobs of it have run, a new one's runtime comes from their epochs (the profile DB's same-model
// history), not from its limit. Seen in the cycle's recording: what decide() saw of each job.
START_TEST(an_unknown_model_learns_from_its_own_history)
{
	const std::string db = temp_path("profiles.db");
	{
		auto w = db::ProfileDb::open_writer(db);
		ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
		// Four finished llama-7b jobs on 1 GPU: a 130 s warm-up epoch, then 100 s epochs.
		for (std::int64_t id = 1; id <= 4; ++id) {
			db::JobRecord r;
			r.cluster = "lab", r.job_id = id, r.model = "llama-7b", r.gpus = 1,
			r.epochs_total = 4;
			r.user = "u" + std::to_string(id);
			r.submit_s = 1000.0 * static_cast<double>(id);
			ck_assert(w->put_job(r).is_ok());
			double t = r.submit_s;
			for (int e = 1; e <= 4; ++e) {
				db::EpochRecord er;
				er.cluster = "lab", er.job_id = id, er.run = 0, er.epoch = e, er.gpus = 1;
				er.start_s = t;
				er.end_s = t += e == 1 ? 130 : 100;
				ck_assert(w->add_epoch(er).is_ok());
			}
		}
	}
	const std::string dir = fresh_dir("llama");
	dlsched_scheduler_t* s = scheduler("Policy=fifo\nProfileDB=" + db + "\nDumpViews=" + dir);
	ck_assert_int_eq(dlsched_scheduler_set_cluster(s, "lab"), DLSCHED_OK);
	CView v(1, 10000);
	// Job 42: llama-7b, 10 epochs on 4 GPUs, a 2000 s limit; job 43: mistral-7b (8 GPUs), also
	// unknown, never run: its limit is all there is. (The epochs are still the user's claim: the
	// runtime counts within [limit / HintTrustFactor, limit], here [200, 2000] s.)
	v.jobs[1].model = "llama-7b";
	v.jobs[1].time_limit = 2000;
	v.jobs[2].model = "mistral-7b";
	v.jobs[2].time_limit = 2000;
	(void)decide(s, v);
	char status[256];
	ck_assert_int_eq(dlsched_scheduler_profile_status(s, status, sizeof status), DLSCHED_OK);
	ck_assert_str_eq(status, "");
	dlsched_scheduler_destroy(s);
	const std::vector<std::string> written = files(dir);
	ck_assert_uint_eq(written.size(), 1);
	auto f = json::Value::parse(read(dir + "/" + written[0]), written[0]);
	ck_assert(f.is_ok());
	const json::Value prepared = f->get("prepared");
	ck_assert_uint_eq(prepared.size(), 3);
	// Their steady epochs: 100 s on one GPU (the warm-up and, of the three after it, the first left
	// out), plus the mean warm-up (130 - 100 s) over its 10 epochs: 103 s per epoch on one GPU
	// (unknown models scale linearly: 4 GPUs, a quarter of it).
	const json::Value llama = prepared.at(1);
	ck_assert_int_eq(static_cast<int>(*llama.get("job_id").as_number()), 42);
	ck_assert_double_eq_tol(*llama.get("epoch_time_1gpu").as_number(), 103, 1e-6);
	ck_assert(!*llama.get("runtime_from_limit").as_bool());
	ck_assert_double_eq_tol(*llama.get("runtime_cv").as_number(), 0.0, 0.05);
	// Mistral-7b: its 2000 s limit over 10 epochs on 8 GPUs, 1600 s per epoch on one GPU.
	const json::Value mistral = prepared.at(2);
	ck_assert_double_eq_tol(*mistral.get("epoch_time_1gpu").as_number(), 1600, 1e-6);
	ck_assert(*mistral.get("runtime_from_limit").as_bool());
}
END_TEST

int main(void)
{
	Suite* s = suite_create("dump_views");
	TCase* tc = tcase_create("dump");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, each_cycle_is_written_and_replays_to_the_same_decisions);
	tcase_add_test(tc, accounts_and_quota_file_quotas_are_recorded_and_replayed);
	tcase_add_test(tc, the_last_200_are_kept_earlier_ones_included);
	tcase_add_test(tc, a_directory_it_cannot_write_costs_the_cycle_nothing);
	tcase_add_test(tc, an_unknown_model_learns_from_its_own_history);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
