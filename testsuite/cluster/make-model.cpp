// make-model: model files for the tests of the learned policies (test-learned.sh), and the order
// such a model gives offline, through the same C ABI that sched/dlsched calls.
//
//   make-model --out FILE [--seed N] [--hidden H]
//       a model with seeded random weights (what `dlsched-train init` writes)
//   make-model --out FILE --prefer small|large
//       a hand-set model whose score depends on one feature only, log2(GPUs requested) / 6: score =
//       -tanh(tanh(f)) (small: the fewest GPUs first) or +tanh(tanh(f)) (large: the most first).
//       Its order does not depend on the clock, the submit times or the job metadata.
//   make-model --order MODEL --gpus G1,G2,... [--profiles DIR]
//       prints the ids (1, 2, ...) of pending jobs with those GPU counts, submitted in that order,
//       in the order Policy=dl2 with ModelFile=MODEL puts them, most urgent first, on two 8-GPU
//       nodes that are down (nothing starts), as sched/dlsched sees a drained cluster. The
//       scheduler's notes go to stderr.
// Built only with libtorch (HAVE_TORCH). It sets the networks' weights directly (models/policy_net.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "dlsched/api.h"
#include "models/learned.h"
#include "models/policy_model.h"
#include "models/policy_net.h"

using dlsched::models::PolicyModel;

namespace {

int usage()
{
	std::fprintf(stderr,
		     "usage: make-model --out FILE [--seed N] [--hidden H] [--prefer small|large]\n"
		     "       make-model --order MODEL --gpus G1,G2,... [--profiles DIR]\n");
	return 2;
}

int write_model(const std::string& out, std::uint64_t seed, int hidden, const std::string& prefer)
{
	auto m = PolicyModel::create(hidden, seed);
	std::string info =
		"{\"made_by\":\"testsuite/cluster/make-model\",\"seed\":" + std::to_string(seed) + "}";
	if (!prefer.empty()) {
		if (prefer != "small" && prefer != "large") {
			std::fprintf(stderr, "make-model: --prefer takes small or large, not '%s'\n",
				     prefer.c_str());
			return 2;
		}
		torch::NoGradGuard no_grad;
		auto& net = m->impl().net;
		for (auto& p : net->parameters())
			p.zero_();
		// Feature 2 is log2(GPUs requested) / 6 (models/features.cpp).
		net->s1->weight[0][2].fill_(1.0);
		net->s2->weight[0][0].fill_(1.0);
		net->s3->weight[0][0].fill_(prefer == "small" ? -1.0 : 1.0);
		info = "{\"made_by\":\"testsuite/cluster/make-model\",\"prefer\":\"" + prefer + "\"}";
	}
	m->set_info_json(info);
	dlsched::Status st = m->save(out);
	if (!st.is_ok()) {
		std::fprintf(stderr, "make-model: %s\n", st.message().c_str());
		return 1;
	}
	return 0;
}

int print_order(const std::string& model, const std::string& gpus_list, const std::string& profiles)
{
	std::vector<int> gpus;
	std::stringstream in(gpus_list);
	for (std::string g; std::getline(in, g, ',');)
		gpus.push_back(std::atoi(g.c_str()));
	if (gpus.empty()) {
		std::fprintf(stderr, "make-model: --gpus needs a list of GPU counts\n");
		return 2;
	}
	char conf[] = "/tmp/make-model-conf.XXXXXX";
	const int fd = mkstemp(conf);
	if (fd < 0)
		return 1;
	close(fd);
	{
		std::ofstream f(conf);
		// The learned order itself: no guard (it would order by GuardPolicy= until a verdict).
		f << "Policy=dl2\nLearnedGuard=no\nModelFile=" << model << "\n";
		if (!profiles.empty())
			f << "ModelProfiles=" << profiles << "\n";
	}
	dlsched_models_install();
	dlsched_scheduler_t* s = nullptr;
	dlsched_error_t err;
	const int rc = dlsched_scheduler_create(conf, &s, &err);
	unlink(conf);
	if (rc != DLSCHED_OK) {
		std::fprintf(stderr, "make-model: %s\n", err.message);
		return 1;
	}
	char notes[1024];
	(void)dlsched_scheduler_notes(s, notes, sizeof notes);
	std::fprintf(stderr, "%s\n", notes);

	dlsched_node_view_t nodes[2] = {};
	const char* names[2] = {"n1", "n2"};
	for (int i = 0; i < 2; ++i) {
		nodes[i].struct_size = sizeof nodes[i];
		nodes[i].name = names[i];
		nodes[i].gpus_total = 8;
		nodes[i].gpus_free = 8;
		nodes[i].partition = "train";
		nodes[i].up = 0;  // drained: nothing starts
	}
	std::vector<dlsched_job_view_t> jobs(gpus.size());
	for (std::size_t i = 0; i < gpus.size(); ++i) {
		dlsched_job_view_t& j = jobs[i];
		std::memset(&j, 0, sizeof j);
		j.struct_size = sizeof j;
		j.job_id = static_cast<std::uint32_t>(i + 1);
		j.user = "root";
		j.partition = "train";
		j.model = "imagenet";
		j.submit_time = 1000 + static_cast<double>(i);
		j.gpus_requested = gpus[i];
		j.epochs_total = 1;
		j.epoch_time_1gpu = 100;
		j.last_stop_time = -1;
		j.epochs_done = -1;
	}
	dlsched_cluster_view_t view = {};
	view.struct_size = sizeof view;
	view.now = 1100;
	view.cycle = 1;
	view.nodes = nodes;
	view.node_count = 2;
	view.jobs = jobs.data();
	view.job_count = jobs.size();
	dlsched_decisions_t* d = nullptr;
	if (dlsched_scheduler_decide(s, &view, &d, &err) != DLSCHED_OK) {
		std::fprintf(stderr, "make-model: %s\n", err.message);
		dlsched_scheduler_destroy(s);
		return 1;
	}
	std::size_t n = 0;
	const std::uint32_t* order = dlsched_decisions_order(d, &n);
	for (std::size_t i = 0; i < n; ++i)
		std::printf("%s%u", i ? " " : "", order[i]);
	std::printf("\n");
	dlsched_decisions_free(d);
	dlsched_scheduler_destroy(s);
	return 0;
}

}  // namespace

int main(int argc, char** argv)
{
	std::string out, prefer, order, gpus, profiles;
	std::uint64_t seed = 1;
	int hidden = 64;
	for (int i = 1; i < argc; ++i) {
		const std::string a = argv[i];
		if (i + 1 >= argc)
			return usage();
		const std::string v = argv[++i];
		if (a == "--out")
			out = v;
		else if (a == "--seed")
			seed = std::strtoull(v.c_str(), nullptr, 10);
		else if (a == "--hidden")
			hidden = std::atoi(v.c_str());
		else if (a == "--prefer")
			prefer = v;
		else if (a == "--order")
			order = v;
		else if (a == "--gpus")
			gpus = v;
		else if (a == "--profiles")
			profiles = v;
		else
			return usage();
	}
	if (!out.empty() == !order.empty() || hidden < 1)
		return usage();
	dlsched::models::use_one_thread();
	return out.empty() ? print_order(order, gpus, profiles) : write_model(out, seed, hidden, prefer);
}
