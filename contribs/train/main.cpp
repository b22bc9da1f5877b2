// dlsched-train: trains the learned scheduler's networks (dlsched-train(1)).
//   init    a model with random weights
//   sl      supervised warm-up on baselines' decisions in the simulator (DL2's first stage)
//   sacct   supervised warm-up on a real cluster's history (sacct records)
//   rl      reinforcement learning (PPO) in dlsched-sim
//   site    a site's own model: from its history, warm-up + RL, judged on a later part (report card)
//   online  fine-tuning from the experience sched/dlsched recorded in the profile DB
//   info    what a model file holds
// The commands are in cmd_*.cpp, the options in cli.cpp, the RL maths in returns.cpp.
#include <cstdio>
#include <exception>
#include <string>

#include "cli.h"
#include "models/learned.h"
#include "workload/workload.h"

using namespace dlsched;
using namespace dlsched::train;

namespace {

int run(int argc, char** argv)
{
	Options o;
	const int rc = parse_args(argc, argv, o);
	if (rc >= 0)
		return rc;
	if (o.command.empty())
		return usage_error("no command given (init, sl, sacct, rl, site, online or info)");
	models::install();
	models::use_one_thread();
	if (o.command == "init")
		return cmd_init(o);
	if (o.command == "info")
		return cmd_info(o);
	auto catalog = load_model_catalog("");
	if (!catalog.is_ok())
		return fail(catalog.status());
	const std::string data = default_data_dir();
	if (o.command == "sl")
		return cmd_sl(o, catalog.value(), data);
	if (o.command == "rl")
		return cmd_rl(o, catalog.value(), data);
	if (o.command == "online")
		return cmd_online(o);
	if (o.command == "sacct")
		return cmd_sacct(o, catalog.value());
	if (o.command == "site")
		return cmd_site(o, catalog.value(), data);
	return usage_error("unknown command '" + o.command + "'");
}

}  // namespace

// Library errors (libtorch's among them) are reported in one line, never as a stack trace.
int main(int argc, char** argv)
{
	try {
		return run(argc, argv);
	} catch (const std::exception& e) {
		std::string what = e.what();
		const std::size_t nl = what.find('\n');
		if (nl != std::string::npos)
			what.resize(nl);
		std::fprintf(stderr, "dlsched-train: %s\n", what.c_str());
		return 1;
	}
}
