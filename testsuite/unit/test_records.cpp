// The ingest protocol's batches (doc/protocol.md, section 2): good batches become typed records with
// the batch's job, cluster and run; every bad one is refused with a message that names the record
// index and field, compared here word for word.
#include <string>

#include "profiledb/records.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;
using namespace dlsched::db;

namespace {

const double kNow = 1732400000.0;  // the server's clock in every case
const char kHead[] = R"("v":1,"cluster":"dlsched","job_id":42,"step":"batch","node":"n1","run":0)";
const char kJob[] =
	R"({"type":"job","model":"resnet50","gpus":4,"nodes":1,"epochs_total":90,"start":1732350000.0})";
const char kEpoch[] = R"({"type":"epoch","epoch":1,"gpus":4,"start":1732350000.1,"end":1732350061.8,)"
		      R"("bytes_read":1048576000,"net_rx_bytes":20480,"nfs_read_bytes":-1})";
const char kCheckpoint[] =
	R"({"type":"checkpoint","kind":"save","epoch":1,"bytes":102760448,"seconds":1.84,"at":1732350063.7})";
const char kJobEnd[] = R"({"type":"job_end","end":1732350100.0,"state":"completed"})";

// A batch with the usual header and these records (a JSON array's inside).
std::string batch(const std::string& records, const std::string& head = kHead)
{
	return "{" + head + ",\"records\":[" + records + "]}";
}

// An epoch record with the given fields after its type.
std::string epoch(const std::string& fields)
{
	return R"({"type":"epoch",)" + fields + "}";
}

std::string many_epochs(int n)
{
	std::string r;
	for (int i = 1; i <= n; ++i)
		r += (i > 1 ? "," : "") + epoch(R"("epoch":)" + std::to_string(i) +
						R"(,"gpus":1,"start":1732300000,"end":1732300001)");
	return r;
}

}  // namespace

START_TEST(the_protocol_example_becomes_records)
{
	const std::string text = batch(std::string(kJob) + "," + kEpoch + "," + kCheckpoint + "," + kJobEnd);
	auto b = parse_batch(text, kNow);
	ck_assert_msg(b.is_ok(), "%s", b.status().message().c_str());
	ck_assert_str_eq(b->cluster.c_str(), "dlsched");
	ck_assert_int_eq(b->job_id, 42);
	ck_assert_str_eq(b->step.c_str(), "batch");
	ck_assert_str_eq(b->node.c_str(), "n1");
	ck_assert_uint_eq(b->record_count(), 4);

	ck_assert(b->job.has_value());
	const JobRecord& j = *b->job;
	ck_assert_str_eq(j.cluster.c_str(), "dlsched");
	ck_assert_int_eq(j.job_id, 42);
	ck_assert_str_eq(j.user.c_str(), "");  // the service fills in the verified owner
	ck_assert_str_eq(j.model.c_str(), "resnet50");
	ck_assert_int_eq(j.gpus, 4);
	ck_assert_int_eq(j.nodes, 1);
	ck_assert_double_eq(j.epochs_total, 90);
	ck_assert_double_eq(j.start_s, 1732350000.0);

	ck_assert_uint_eq(b->epochs.size(), 1);
	const EpochRecord& e = b->epochs[0];
	ck_assert_str_eq(e.cluster.c_str(), "dlsched");
	ck_assert_int_eq(e.job_id, 42);
	ck_assert_int_eq(e.run, 0);
	ck_assert_str_eq(e.node.c_str(), "n1");  // the batch's node: where the epoch ran
	ck_assert_int_eq(e.epoch, 1);
	ck_assert_int_eq(e.gpus, 4);
	ck_assert_double_eq_tol(e.seconds(), 61.7, 1e-6);
	ck_assert_int_eq(e.bytes_read, 1048576000);
	ck_assert_int_eq(e.net_rx_bytes, 20480);
	ck_assert_int_eq(e.nfs_read_bytes, -1);

	ck_assert_uint_eq(b->checkpoints.size(), 1);
	const CheckpointRecord& c = b->checkpoints[0];
	ck_assert_int_eq(c.job_id, 42);
	ck_assert_str_eq(c.kind.c_str(), "save");
	ck_assert_double_eq(c.epoch, 1);
	ck_assert_int_eq(c.bytes, 102760448);
	ck_assert_double_eq_tol(c.seconds, 1.84, 1e-9);
	ck_assert_double_eq_tol(c.at_s, 1732350063.7, 1e-6);

	ck_assert(b->job_end.has_value());
	ck_assert_double_eq(b->job_end->end_s, 1732350100.0);
	ck_assert_str_eq(b->job_end->state.c_str(), "completed");
}
END_TEST

struct GoodCase {
	const char* what;
	std::string text;
	std::size_t records;
};

START_TEST(good_batches_at_the_edges)
{
	const GoodCase cases[] = {
		{"counters left out are -1",
		 batch(epoch(R"("epoch":3,"gpus":2,"start":1732350000,"end":1732350010)")), 1},
		{"a job record without model and epochs",
		 batch(R"({"type":"job","gpus":0,"nodes":2,"start":1732350000})"), 1},
		{"one cluster (empty name), a step number, a restart",
		 batch(epoch(R"("epoch":1,"gpus":1,"start":1732350000,"end":1732350000)"),
		       R"("v":1,"cluster":"","job_id":4294967294,"step":"12","node":"gpu-01.example.org","run":3)"),
		 1},
		{"the extern step, times up to a day ahead",
		 batch(epoch(R"("epoch":10000000,"gpus":4096,"start":1732486400,"end":1732486400)"),
		       R"("v":1,"cluster":"c","job_id":1,"step":"extern","node":"n","run":1000000)"),
		 1},
		{"a fractional checkpoint epoch, a load of zero bytes",
		 batch(R"({"type":"checkpoint","kind":"load","epoch":2.5,"bytes":0,"seconds":0,"at":1732350000})"),
		 1},
		{"a job that ends when it starts, records in any order",
		 batch(R"({"type":"job_end","end":1732350000,"state":"failed"},)"
		       R"({"type":"job","model":"a.b_c-D9","gpus":1,"nodes":1,"start":1732350000})"),
		 2},
		{"a model name of 64 characters",
		 batch(R"({"type":"job","model":")" + std::string(64, 'm') +
		       R"(","gpus":1,"nodes":1,"start":1732350000})"),
		 1},
		{"1000 records", batch(many_epochs(1000)), 1000},
	};
	for (const GoodCase& gc : cases) {
		auto b = parse_batch(gc.text, kNow);
		ck_assert_msg(b.is_ok(), "%s: refused: %s", gc.what, b.status().message().c_str());
		ck_assert_msg(b->record_count() == gc.records, "%s: %zu records, want %zu", gc.what,
			      b->record_count(), gc.records);
	}
	auto run3 = parse_batch(batch(std::string(kEpoch) + "," + kCheckpoint,
				      R"("v":1,"cluster":"x","job_id":7,"step":"0","node":"n2","run":3)"),
				kNow);
	ck_assert(run3.is_ok());
	ck_assert_int_eq(run3->epochs[0].run, 3);
	ck_assert_int_eq(run3->checkpoints[0].run, 3);
	ck_assert_str_eq(run3->checkpoints[0].cluster.c_str(), "x");
	auto bare =
		parse_batch(batch(epoch(R"("epoch":3,"gpus":2,"start":1732350000,"end":1732350010)")), kNow);
	ck_assert(bare.is_ok());
	ck_assert_int_eq(bare->epochs[0].bytes_read, -1);
	ck_assert_int_eq(bare->epochs[0].net_rx_bytes, -1);
	ck_assert_int_eq(bare->epochs[0].nfs_read_bytes, -1);
}
END_TEST

struct BadCase {
	std::string text;
	const char* message;
};

START_TEST(bad_batches_name_the_record_and_field)
{
	const std::string head_without_v =
		R"("cluster":"dlsched","job_id":42,"step":"batch","node":"n1","run":0)";
	const std::string ep = R"("epoch":1,"gpus":1,"start":1732350000,"end":1732350010)";
	const BadCase cases[] = {
		// The batch.
		{"[1]", "batch: not a JSON object (doc/protocol.md, section 2)"},
		{batch(kEpoch, R"("v":2,)" + head_without_v),
		 "v: 2 is not a protocol version this dlsched speaks (1)"},
		{batch(kEpoch, R"("v":"1",)" + head_without_v), "v: the string '1' is not a number"},
		{batch(kEpoch, head_without_v), "v: missing"},
		{batch(kEpoch, std::string(kHead) + R"(,"vv":1)"),
		 "unknown key 'vv' (a batch has: v, cluster, job_id, step, node, run, records)"},
		{batch(kEpoch, std::string(kHead) + ",\"x\\u0001\\\"\":1"),
		 "unknown key 'x\\x01\"' (a batch has: v, cluster, job_id, step, node, run, records)"},
		{batch(kEpoch, R"("v":1,"cluster":"a/b","job_id":42,"step":"batch","node":"n1","run":0)"),
		 "cluster: 'a/b' is not a cluster name (0 to 64 of A-Z a-z 0-9 . _ -)"},
		{batch(kEpoch, R"("v":1,"job_id":42,"step":"batch","node":"n1","run":0)"),
		 "cluster: missing"},
		{batch(kEpoch, R"("v":1,"cluster":"c","job_id":0,"step":"batch","node":"n1","run":0)"),
		 "job_id: 0 is out of range (1 to 4294967294)"},
		{batch(kEpoch, R"("v":1,"cluster":"c","job_id":"42","step":"batch","node":"n1","run":0)"),
		 "job_id: the string '42' is not a number"},
		{batch(kEpoch, R"("v":1,"cluster":"c","job_id":4.5,"step":"batch","node":"n1","run":0)"),
		 "job_id: 4.5 is not a whole number"},
		{batch(kEpoch, R"("v":1,"cluster":"c","job_id":42,"step":"foo","node":"n1","run":0)"),
		 "step: 'foo' is not a step (batch, extern or a step number)"},
		{batch(kEpoch, R"("v":1,"cluster":"c","job_id":42,"step":"-1","node":"n1","run":0)"),
		 "step: '-1' is not a step (batch, extern or a step number)"},
		{batch(kEpoch, R"("v":1,"cluster":"c","job_id":42,"step":"batch","node":"","run":0)"),
		 "node: '' is not a node name (1 to 255 of A-Z a-z 0-9 . _ -)"},
		{batch(kEpoch, R"("v":1,"cluster":"c","job_id":42,"step":"batch","node":"n1","run":-1)"),
		 "run: -1 is out of range (0 to 1000000)"},
		{batch(kEpoch, R"("v":1,"cluster":"c","job_id":42,"step":"batch","node":"n1","run":null)"),
		 "run: null is not a number"},
		{"{" + std::string(kHead) + "}", "records: missing"},
		{"{" + std::string(kHead) + R"(,"records":{}})",
		 "records: an object is not an array of records"},
		{batch(""), "records: empty (a batch carries 1 to 1000 records)"},
		{batch(many_epochs(1001)),
		 "records: 1001 records; at most 1000 per batch (send the rest in another)"},
		// Records of any type.
		{batch("3"), "records[0]: the number 3 is not a record (a JSON object)"},
		{batch(R"({"epoch":1})"), "records[0].type: missing"},
		{batch(std::string(kEpoch) + R"(,{"type":"epoc"})"),
		 "records[1].type: 'epoc' is not a record type (job, epoch, checkpoint, job_end)"},
		// Epochs.
		{batch(std::string(kJob) + "," + kEpoch + "," +
		       epoch(R"("epoch":2,"gpus":4,"start":1732350020.0,"end":1732350017.0)")),
		 "records[2].end: 1732350017.0 is before start 1732350020.0"},
		{batch(epoch(ep + R"(,"gpu":4)")),
		 "records[0]: unknown key 'gpu' (an epoch record has: type, epoch, gpus, start, end, "
		 "bytes_read, "
		 "net_rx_bytes, nfs_read_bytes)"},
		{batch(epoch(R"("epoch":0,"gpus":1,"start":1732350000,"end":1732350010)")),
		 "records[0].epoch: 0 is out of range (1 to 10000000)"},
		{batch(epoch(R"("epoch":1.5,"gpus":1,"start":1732350000,"end":1732350010)")),
		 "records[0].epoch: 1.5 is not a whole number"},
		{batch(epoch(R"("epoch":1,"gpus":4097,"start":1732350000,"end":1732350010)")),
		 "records[0].gpus: 4097 is out of range (0 to 4096)"},
		{batch(epoch(R"("epoch":1,"gpus":-1,"start":1732350000,"end":1732350010)")),
		 "records[0].gpus: -1 is out of range (0 to 4096)"},
		{batch(epoch(R"("epoch":1,"start":1732350000,"end":1732350010)")),
		 "records[0].gpus: missing"},
		{batch(epoch(R"("epoch":1,"gpus":1,"start":12,"end":1732350010)")),
		 "records[0].start: 12.0 is not a plausible time (Unix seconds; before 2000-01-01)"},
		{batch(epoch(R"("epoch":1,"gpus":1,"start":1732350000,"end":1732486400.5)")),
		 "records[0].end: 1732486400.5 is more than a day ahead of this server's clock "
		 "(1732400000.0); "
		 "check the node's clock"},
		{batch(epoch(R"("epoch":1,"gpus":1,"start":"yesterday","end":1732350010)")),
		 "records[0].start: the string 'yesterday' is not a number"},
		{batch(epoch(ep + R"(,"bytes_read":-2)")),
		 "records[0].bytes_read: -2 is out of range (-1 to 9007199254740992)"},
		{batch(epoch(ep + R"(,"net_rx_bytes":1e17)")),
		 "records[0].net_rx_bytes: 100000000000000000 is out of range (-1 to 9007199254740992)"},
		{batch(epoch(ep + R"(,"nfs_read_bytes":true)")),
		 "records[0].nfs_read_bytes: true is not a number"},
		{batch(epoch(ep) + "," + epoch(ep)), "records[1].epoch: 1 appears twice in the batch"},
		// Checkpoints.
		{batch(R"({"type":"checkpoint","kind":"suspend","epoch":1,"bytes":1,"seconds":1,"at":1732350000})"),
		 "records[0].kind: 'suspend' is not one of save, load"},
		{batch(R"({"type":"checkpoint","kind":"save","epoch":-1,"bytes":1,"seconds":1,"at":1732350000})"),
		 "records[0].epoch: -1.0 is out of range (0.0 to 10000000.0)"},
		{batch(R"({"type":"checkpoint","kind":"save","epoch":1,"bytes":-1,"seconds":1,"at":1732350000})"),
		 "records[0].bytes: -1 is out of range (0 to 9007199254740992)"},
		{batch(R"({"type":"checkpoint","kind":"save","epoch":1,"bytes":1,"seconds":-0.5,"at":1732350000})"),
		 "records[0].seconds: -0.5 is out of range (0.0 to 10000000.0)"},
		{batch(R"({"type":"checkpoint","kind":"save","epoch":1,"bytes":1,"seconds":1})"),
		 "records[0].at: missing"},
		{batch(R"({"type":"checkpoint","kind":"save","epoch":1,"bytes":1,"seconds":1,"at":1732350000,"path":"/x"})"),
		 "records[0]: unknown key 'path' (a checkpoint record has: type, kind, epoch, bytes, "
		 "seconds, at)"},
		// Job records.
		{batch(R"({"type":"job","model":"res net","gpus":1,"nodes":1,"start":1732350000})"),
		 "records[0].model: 'res net' is not a model name (1 to 64 of A-Z a-z 0-9 . _ -)"},
		{batch(R"({"type":"job","model":")" + std::string(65, 'm') +
		       R"(","gpus":1,"nodes":1,"start":1732350000})"),
		 "records[0].model: 'mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm...' is not a model "
		 "name (1 to 64 of A-Z "
		 "a-z 0-9 . _ -)"},
		{batch(R"({"type":"job","model":"","gpus":1,"nodes":1,"start":1732350000})"),
		 "records[0].model: '' is not a model name (1 to 64 of A-Z a-z 0-9 . _ -)"},
		{batch(R"({"type":"job","gpus":1,"nodes":0,"start":1732350000})"),
		 "records[0].nodes: 0 is out of range (1 to 100000)"},
		{batch(R"({"type":"job","gpus":1,"nodes":1,"start":1732350000,"user":"root"})"),
		 "records[0]: unknown key 'user' (a job record has: type, model, gpus, nodes, epochs_total, "
		 "start)"},
		{batch(std::string(kJob) + "," + kEpoch + "," + kJob),
		 "records[2]: a second job record (the first is records[0]; one per batch)"},
		// Job ends.
		{batch(R"({"type":"job_end","end":1732350000,"state":"done"})"),
		 "records[0].state: 'done' is not one of completed, checkpointed, failed"},
		{batch(std::string(kJobEnd) + "," + kJobEnd),
		 "records[1]: a second job_end record (the first is records[0]; one per batch)"},
		{batch(std::string(kJob) + R"(,{"type":"job_end","end":1732349999.5,"state":"failed"})"),
		 "records[1].end: 1732349999.5 is before the job's start 1732350000.0 (records[0].start)"},
	};
	for (const BadCase& bc : cases) {
		auto b = parse_batch(bc.text, kNow);
		ck_assert_msg(!b.is_ok(), "accepted: %s", bc.text.c_str());
		const std::string got = b.status().message();
		ck_assert_msg(got == bc.message, "got \"%s\", want \"%s\"", got.c_str(), bc.message);
		ck_assert_int_eq(static_cast<int>(b.status().code()),
				 static_cast<int>(StatusCode::kInvalidArgument));
	}
}
END_TEST

START_TEST(broken_json_names_line_and_column)
{
	const char* const cases[] = {
		"",
		"{",
		"{\"v\":1,}",
		"{\"v\":1,\"v\":1}",  // duplicate keys are refused, not silently merged
		"\xff\xfe",
		"{\"v\":1e999}",
		"{\"v\":1} trailing",
	};
	for (const char* text : cases) {
		auto b = parse_batch(text, kNow);
		ck_assert_msg(!b.is_ok(), "accepted: %s", text);
		const std::string got = b.status().message();
		ck_assert_msg(got.rfind("batch:", 0) == 0 && got.size() > 8, "no place in \"%s\"",
			      got.c_str());
	}
	// A NUL inside the text is refused too (munge payloads are binary-safe).
	const std::string with_nul = std::string("{\"v\":1", 6) + std::string(1, '\0') + "}";
	ck_assert(!parse_batch(with_nul, kNow).is_ok());
}
END_TEST

int main()
{
	Suite* s = suite_create("records");
	TCase* tc = tcase_create("records");
	tcase_add_test(tc, the_protocol_example_becomes_records);
	tcase_add_test(tc, good_batches_at_the_edges);
	tcase_add_test(tc, bad_batches_name_the_record_and_field);
	tcase_add_test(tc, broken_json_names_line_and_column);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
