// common/util/flag_table: one declarative table parses the flags and writes their help.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "check_main.h"
#include "util/flag_table.h"

using namespace dlsched;

namespace {

struct Parsed {
	std::string model;
	double noise = 0.03;
	int gpus = 0;
	bool verbose = false;
	std::vector<std::string> rest;
};

Status parse(std::vector<std::string> args, Parsed& p, FlagTable** out = nullptr)
{
	static std::unique_ptr<FlagTable>
		last;  // the parsed table outlives the call (help_asked, options_help)
	last = std::make_unique<FlagTable>(std::vector<FlagSpec>{
		string_flag("--model", "NAME", "the model", &p.model),
		number_flag("--noise", "CV", "variation\nof epoch times", &p.noise, 0, 1),
		int_flag("--gpus", "G", "GPUs", &p.gpus, 1, 4096),
		switch_flag("--verbose", "more output", &p.verbose, "-v"),
	});
	std::vector<char*> argv{const_cast<char*>("tool")};
	for (std::string& a : args)
		argv.push_back(a.data());
	if (out)
		*out = last.get();
	return last->parse(static_cast<int>(argv.size()), argv.data(), 1, &p.rest);
}

bool fails_with(const Status& st, const std::string& words)
{
	return !st.is_ok() && st.message().find(words) != std::string::npos;
}

// whole_flag into other types, and a flag whose parser names the flag itself (as parse_estimates
// does, for its config key and its flag alike).
struct Extra {
	std::size_t jobs = 7;
	std::uint64_t seed = 1;
	std::string mode;
};

Status parse_extra(std::vector<std::string> args, Extra& e)
{
	FlagTable t({
		whole_flag("--jobs", "N", "jobs", &e.jobs, 1, 100000000),
		whole_flag("--seed", "N", "seed", &e.seed, 0, 2147483647),
		FlagSpec{"--estimates", "MODE", "what policies see",
			 [&e](const std::string& v) {
				 if (v != "oracle")
					 return invalid_argument("--estimates '" + v + "': expected oracle");
				 e.mode = v;
				 return Status::ok();
			 },
			 false, ""},
	});
	std::vector<char*> argv{const_cast<char*>("tool")};
	for (std::string& a : args)
		argv.push_back(a.data());
	return t.parse(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

START_TEST(values_and_forms)
{
	Parsed p;
	ck_assert(parse({"--model", "bert", "--noise=0.5", "-v", "--gpus", "8", "file.csv"}, p).is_ok());
	ck_assert_str_eq(p.model.c_str(), "bert");
	ck_assert_double_eq(p.noise, 0.5);
	ck_assert_int_eq(p.gpus, 8);
	ck_assert(p.verbose);
	ck_assert_int_eq(p.rest.size(), 1);
	ck_assert_str_eq(p.rest[0].c_str(), "file.csv");
}
END_TEST

START_TEST(errors_name_the_flag)
{
	Parsed p;
	ck_assert(fails_with(parse({"--noise", "2"}, p), "--noise 2: give 0 to 1"));
	ck_assert(fails_with(parse({"--noise", "abc"}, p), "--noise 'abc' is not a number"));
	ck_assert(fails_with(parse({"--gpus", "1.5"}, p), "--gpus '1.5' is not a whole number"));
	ck_assert(fails_with(parse({"--gpus", "0"}, p), "--gpus 0: give 1 to 4096"));
	ck_assert(fails_with(parse({"--model"}, p), "--model needs a value (NAME)"));
	ck_assert(
		fails_with(parse({"--model", "a", "--model=b"}, p), "--model is given twice: give it once"));
	ck_assert(fails_with(parse({"--verbose=yes"}, p), "--verbose takes no value"));
	ck_assert(fails_with(parse({"--nope"}, p), "unknown option '--nope'"));
	// A value that fails leaves the destination as it was.
	Parsed q;
	(void)parse({"--noise", "7"}, q);
	ck_assert_double_eq(q.noise, 0.03);
}
END_TEST

START_TEST(help_comes_from_the_table)
{
	Parsed p;
	FlagTable* t = nullptr;
	ck_assert(parse({"--model", "x", "--help", "--nope"}, p, &t).is_ok());
	ck_assert(t->help_asked());
	const std::string h = t->options_help(20);
	ck_assert_msg(h.find("  --model NAME      the model\n") != std::string::npos, "%s", h.c_str());
	ck_assert_msg(h.find("  -v, --verbose     more output\n") != std::string::npos, "%s", h.c_str());
	// A help of several lines is indented under the column.
	ck_assert_msg(h.find("variation\n                    of epoch times\n") != std::string::npos, "%s",
		      h.c_str());
}
END_TEST

START_TEST(whole_numbers_and_named_errors)
{
	Extra e;
	ck_assert(parse_extra({"--jobs", "400", "--seed=2147483647", "--estimates", "oracle"}, e).is_ok());
	ck_assert_uint_eq(e.jobs, 400);
	ck_assert_uint_eq(e.seed, 2147483647u);
	ck_assert_str_eq(e.mode.c_str(), "oracle");
	// The range digit for digit (not "2.14748e+09").
	Status st = parse_extra({"--seed", "-1"}, e);
	ck_assert(!st.is_ok());
	ck_assert_str_eq(st.message().c_str(), "--seed -1: give 0 to 2147483647");
	ck_assert(fails_with(parse_extra({"--jobs", "0x10"}, e), "--jobs '0x10' is not a whole number"));
	ck_assert_uint_eq(e.jobs, 400);  // a refused value leaves it as it was
	// Named once, not "--estimates --estimates 'truth': ...".
	st = parse_extra({"--estimates", "truth"}, e);
	ck_assert(!st.is_ok());
	ck_assert_str_eq(st.message().c_str(), "--estimates 'truth': expected oracle");
	// number_value: the checks of number_flag, for a flag that also takes a word.
	double d = 5;
	ck_assert(number_value("2.5", 0, 86400, d).is_ok());
	ck_assert_double_eq(d, 2.5);
	st = number_value("-1", 0, 86400, d);
	ck_assert_str_eq(st.message().c_str(), "-1: give 0 to 86400");
	st = number_value("model", 0, 86400, d);
	ck_assert_str_eq(st.message().c_str(), "'model' is not a number");
	ck_assert_double_eq(d, 2.5);
}
END_TEST

int main()
{
	Suite* s = suite_create("flag_table");
	TCase* tc = tcase_create("flag_table");
	tcase_add_test(tc, values_and_forms);
	tcase_add_test(tc, errors_name_the_flag);
	tcase_add_test(tc, help_comes_from_the_table);
	tcase_add_test(tc, whole_numbers_and_named_errors);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
