// common/util/flag_table: one declarative table parses the flags and writes their help.
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

int main()
{
	Suite* s = suite_create("flag_table");
	TCase* tc = tcase_create("flag_table");
	tcase_add_test(tc, values_and_forms);
	tcase_add_test(tc, errors_name_the_flag);
	tcase_add_test(tc, help_comes_from_the_table);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
