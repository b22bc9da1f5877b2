// dlsched.conf: good files, every kind of error with its exact message, and dump() round trips.
#include <check.h>

#include "check_main.h"

#include <cmath>
#include <string>
#include <vector>

#include "config/config.h"
#include "json/json.h"

using namespace dlsched;

START_TEST(defaults_and_good_files)
{
	Config d;
	ck_assert(d.get_string("Policy") == "slurm-backfill");
	ck_assert_double_eq(d.get_double("SchedInterval"), 60);
	ck_assert(d.get_bool("SchedOnEvents"));
	ck_assert(!d.is_set("Policy"));

	auto c = Config::parse(
		"# comment\n\n  policy=tiresias-las   SchedInterval=30 # trailing\n"
		"TiresiasQueueThresholds=100,1000\nSchedOnEvents=no\nModelProfiles=\"/a b/c\"\n",
		"dlsched.conf");
	ck_assert_msg(c.is_ok(), "%s", c.status().message().c_str());
	ck_assert(c->get_string("Policy") == "tiresias-las");
	ck_assert(c->is_set("Policy"));
	ck_assert_double_eq(c->get_double("SchedInterval"), 30);
	ck_assert(!c->get_bool("SchedOnEvents"));
	ck_assert(c->get_string("ModelProfiles") == "/a b/c");
	std::vector<double> t = c->get_double_list("TiresiasQueueThresholds");
	ck_assert_uint_eq(t.size(), 2);
	ck_assert_double_eq(t[1], 1000);
}
END_TEST

// The safety keys of a file that does not load as a whole (a typo in Policy=): what the file says of
// the keys asked for, each error passed over and named; the first of a key given twice stands.
START_TEST(parse_only_reads_the_keys_asked_for_leniently)
{
	const std::vector<std::string_view> keys = {"ProfileDB", "PreemptGrace", "InferencePartition",
						    "SchedInterval"};
	std::vector<std::string> skipped;
	Config c = Config::parse_only(
		"Policy=nonsense\nProfileDB=/var/db/p.db PreemptGrace=45\n"
		"InferencePartiton=typo\nInferencePartition=inf\nSchedInterval=-3\n"
		"broken line\nPreemptGrace=90\n",
		"d.conf", keys, &skipped);
	ck_assert(c.get_string("ProfileDB") == "/var/db/p.db");
	ck_assert_double_eq(c.get_double("PreemptGrace"), 45);
	ck_assert(c.get_string("InferencePartition") == "inf");
	ck_assert_double_eq(c.get_double("SchedInterval"), 60);  // out of range: the default
	ck_assert(c.get_string("Policy") == "slurm-backfill");   // not asked for: the default
	ck_assert_uint_eq(skipped.size(), 3);
	ck_assert_str_eq(skipped[0].c_str(), "d.conf:5: SchedInterval: '-3' is out of range [1, 86400]");
	ck_assert_str_eq(skipped[1].c_str(), "d.conf:6: expected Key=Value, found 'broken'");
	ck_assert_str_eq(skipped[2].c_str(),
			 "d.conf:7: PreemptGrace=90 ignored: PreemptGrace=45 at d.conf:2");
	// The whole file does not load.
	ck_assert(!Config::parse("Policy=nonsense\nInferencePartiton=typo\n", "d.conf").is_ok());
}
END_TEST

struct BadCase {
	const char* text;
	const char* message;
};

START_TEST(errors_name_file_and_line)
{
	const BadCase cases[] = {
		{"Policy=fifo\nOrderingPolcy=srtf\n",
		 "x.conf:2: unknown key 'OrderingPolcy' (did you mean 'OrderingPolicy'?)"},
		{"Colour=blue\n", "x.conf:1: unknown key 'Colour' (see dlsched.conf(5))"},
		{"SchedInterval=-5\n", "x.conf:1: SchedInterval: '-5' is out of range [1, 86400]"},
		{"SchedInterval=fast\n", "x.conf:1: SchedInterval: 'fast' is not a number"},
		{"Seed=1.5\n", "x.conf:1: Seed: '1.5' is not an integer"},
		{"SchedOnEvents=maybe\n", "x.conf:1: SchedOnEvents: 'maybe' is not yes or no"},
		{"TiresiasQueueThresholds=10,5\n",
		 "x.conf:1: TiresiasQueueThresholds: '10,5' must be strictly increasing"},
		{"\n\nPolicy\n", "x.conf:3: expected Key=Value, found 'Policy'"},
		{"ModelProfiles=\"/open\n", "x.conf:1: ModelProfiles: unterminated quoted value"},
		// ModelFallback= stands in for a learned ordering: a heuristic one, known by name.
		{"Policy=dl2\nModelFallback=dl2\n",
		 "x.conf:2: ModelFallback: 'dl2' is a learned ordering; a fallback must be a heuristic "
		 "ordering: one of "
		 "tiresias-las,srtf,fifo,drf,edf,least-slack"},
		{"ModelFallback=Dual-Agent\n",
		 "x.conf:1: ModelFallback: 'Dual-Agent' is a learned ordering; a fallback must be a "
		 "heuristic ordering: "
		 "one of tiresias-las,srtf,fifo,drf,edf,least-slack"},
		{"ModelFallback=lifo\n",
		 "x.conf:1: ModelFallback: 'lifo' is not one of tiresias-las,srtf,fifo,drf,edf,least-slack"},
		// A key given twice with two values (keys are case-insensitive): which one was meant?
		{"Policy=srtf\nSeed=3\npolicy=fifo\n",
		 "x.conf:3: Policy=fifo conflicts with Policy=srtf at x.conf:1: give the key once"},
	};
	for (const BadCase& bc : cases) {
		auto c = Config::parse(bc.text, "x.conf");
		ck_assert_msg(!c.is_ok(), "accepted: %s", bc.text);
		const std::string got = c.status().message();
		ck_assert_msg(got == bc.message, "got \"%s\", want \"%s\"", got.c_str(), bc.message);
	}
}
END_TEST

// Keys set one by one (dlsched-sim --config-set, the tests) are checked as a file's are.
START_TEST(set_checks_values_as_the_file_does)
{
	Config c;
	ck_assert(c.set("ModelFallback", "srtf", "--config-set").is_ok());
	ck_assert(c.get_string("ModelFallback") == "srtf");
	const Status st = c.set("ModelFallback", "dl2", "--config-set");
	ck_assert(!st.is_ok());
	ck_assert_str_eq(
		st.message().c_str(),
		"--config-set: ModelFallback: 'dl2' is a learned ordering; a fallback must be a heuristic "
		"ordering: one of tiresias-las,srtf,fifo,drf,edf,least-slack");
	ck_assert(c.get_string("ModelFallback") == "srtf");  // a refused value changes nothing
}
END_TEST

START_TEST(missing_file_names_the_path)
{
	auto c = Config::load_file("/nonexistent/dlsched.conf");
	ck_assert(!c.is_ok());
	ck_assert_int_eq(static_cast<int>(c.status().code()), static_cast<int>(StatusCode::kNotFound));
	ck_assert(c.status().message().rfind("/nonexistent/dlsched.conf: cannot open", 0) == 0);
}
END_TEST

START_TEST(dump_parses_back_to_the_same_values)
{
	auto c = Config::parse("Policy=drf\nRestartCost=12.5\nModelProfiles=\"/with space\"\n", "in.conf");
	ck_assert(c.is_ok());
	const std::string text = c->dump();
	ck_assert(text.find("(set in in.conf:2)") != std::string::npos);
	auto again = Config::parse(text, "dump");
	ck_assert_msg(again.is_ok(), "%s", again.status().message().c_str());
	for (const ConfigKey& k : config_keys()) {
		if (k.type == ConfigType::kString)
			ck_assert(c->get_string(k.name) == again->get_string(k.name));
	}
	ck_assert_double_eq(again->get_double("RestartCost"), 12.5);
}
END_TEST

START_TEST(json_round_trip_and_errors)
{
	using json::Value;
	Value o = Value::object();
	o.set("b", Value::integer(2)).set("a", Value::string("x\"y"));
	o.set("nan", Value::number(NAN));
	Value arr = Value::array();
	arr.push_back(Value::boolean(true));
	o.set("list", arr);
	const std::string compact = o.dump(0);
	ck_assert_str_eq(compact.c_str(), "{\"b\":2,\"a\":\"x\\\"y\",\"nan\":null,\"list\":[true]}");
	auto p = Value::parse(o.dump(2), "mem");
	ck_assert(p.is_ok());
	const std::string a = *p->get("a").as_string();
	ck_assert_str_eq(a.c_str(), "x\"y");
	ck_assert_double_eq(*p->get("b").as_number(), 2);
	ck_assert(!p->get("missing").is_valid());
	ck_assert(!p->get("a").as_number());
	auto bad = Value::parse("{\"a\": 1,\n \"b\": }", "bad.json");
	ck_assert(!bad.is_ok());
	ck_assert(bad.status().message().rfind("bad.json:2:", 0) == 0);
}
END_TEST

int main()
{
	Suite* s = suite_create("config");
	TCase* tc = tcase_create("config");
	tcase_add_test(tc, defaults_and_good_files);
	tcase_add_test(tc, parse_only_reads_the_keys_asked_for_leniently);
	tcase_add_test(tc, errors_name_file_and_line);
	tcase_add_test(tc, set_checks_values_as_the_file_does);
	tcase_add_test(tc, missing_file_names_the_path);
	tcase_add_test(tc, dump_parses_back_to_the_same_values);
	tcase_add_test(tc, json_round_trip_and_errors);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
