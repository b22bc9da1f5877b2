#include "cluster_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "util/csv.h"
#include "util/random.h"

namespace dlsched::sim {

namespace {

bool parse_nxg(const std::string& spec, long long& n, long long& g)
{
	std::size_t x = spec.find('x');
	return x != std::string::npos && parse_integer(spec.substr(0, x), n) &&
	       parse_integer(spec.substr(x + 1), g);
}

// Rng stream of the hidden node speeds (other streams: the workload builder's).
constexpr std::uint64_t kSpeedFactorStream = 0x5eed5;

void add_nodes(ClusterSpec& cluster, long long count, int gpus, const std::string& type,
	       const std::string& partition, PartitionKind kind, bool loanable, double fluctuation)
{
	std::vector<Node>& nodes = cluster.nodes;
	for (long long i = 0; i < count; ++i) {
		cluster.fluctuation.push_back(fluctuation);
		Node n;
		n.index = static_cast<NodeIndex>(nodes.size());
		n.name = "n" + std::to_string(nodes.size() + 1);
		n.gpus_total = n.gpus_free = gpus;
		n.gpu_type = type;
		n.partition = partition;
		n.kind = kind;
		n.loanable = loanable;
		nodes.push_back(std::move(n));
	}
}

}  // namespace

Result<std::vector<Node>> parse_cluster_spec(const std::string& spec,
					     const std::vector<std::string>& known_gpu_types)
{
	Result<ClusterSpec> c = parse_cluster(spec, known_gpu_types);
	if (!c.is_ok())
		return c.status();
	return std::move(c.value().nodes);
}

std::vector<double> draw_speed_factors(const std::vector<double>& fluctuation, std::uint64_t seed)
{
	if (std::all_of(fluctuation.begin(), fluctuation.end(), [](double s) { return s == 0; }))
		return {};
	std::vector<double> factors;
	factors.reserve(fluctuation.size());
	for (std::size_t k = 0; k < fluctuation.size(); ++k) {
		Rng rng(seed, kSpeedFactorStream + k);
		const double sigma = fluctuation[k];
		factors.push_back(std::exp(sigma * rng.normal() - sigma * sigma / 2));
	}
	return factors;
}

Result<ClusterSpec> parse_cluster(const std::string& spec, const std::vector<std::string>& known_gpu_types)
{
	ClusterSpec cluster;
	std::vector<Node>& nodes = cluster.nodes;
	long long n = 0, g = 0;
	if (parse_nxg(spec, n, g)) {
		if (n < 1 || g < 1 || n > 100000 || g > 64)
			return invalid_argument(
				"cluster '" + spec +
				"': want N nodes x G GPUs with 1 <= N <= 100000, 1 <= G <= 64");
		add_nodes(cluster, n, static_cast<int>(g), "v100", "train", PartitionKind::kTraining, false,
			  0);
		return cluster;
	}
	std::ifstream in(spec);
	if (!in)
		return not_found("cluster '" + spec +
				 "': neither NxG (e.g. 64x8) nor a readable cluster file");
	std::string line;
	std::size_t line_no = 0;
	while (std::getline(in, line)) {
		++line_no;
		const std::string where = spec + ":" + std::to_string(line_no);
		std::size_t hash = line.find('#');
		if (hash != std::string::npos)
			line.resize(hash);
		std::istringstream words(line);
		std::string word;
		long long count = -1, gpus = -1;
		std::string type = "v100", partition = "train", kind = "training", loanable = "no";
		double fluctuation = 0;
		bool any = false;
		while (words >> word) {
			any = true;
			std::size_t eq = word.find('=');
			if (eq == std::string::npos)
				return parse_error(where + ": expected Key=Value, found '" + word + "'");
			std::string key = word.substr(0, eq), value = word.substr(eq + 1);
			for (char& c : key)
				c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
			if (key == "nodes") {
				if (!parse_integer(value, count) || count < 1)
					return parse_error(where + ": Nodes '" + value +
							   "' is not a positive integer");
			} else if (key == "gpus") {
				if (!parse_integer(value, gpus) || gpus < 1 || gpus > 64)
					return parse_error(where + ": Gpus '" + value +
							   "' is not an integer in [1, 64]");
			} else if (key == "gputype") {
				type = value;
				if (!known_gpu_types.empty() &&
				    std::find(known_gpu_types.begin(), known_gpu_types.end(), type) ==
					    known_gpu_types.end()) {
					std::string known;
					for (const std::string& k : known_gpu_types)
						known += (known.empty() ? "" : ", ") + k;
					return parse_error(where + ": unknown GPU type '" + type +
							   "' (known: " + known + ")");
				}
			} else if (key == "partition") {
				partition = value;
			} else if (key == "kind") {
				if (value != "training" && value != "inference")
					return parse_error(where + ": Kind '" + value +
							   "' is not training or inference");
				kind = value;
			} else if (key == "loanable") {
				if (value != "yes" && value != "no")
					return parse_error(where + ": Loanable '" + value +
							   "' is not yes or no");
				loanable = value;
			} else if (key == "fluctuation") {
				if (!parse_number(value, fluctuation) ||
				    !(fluctuation >= 0 && fluctuation <= 2))
					return parse_error(where + ": Fluctuation '" + value +
							   "' is not a number in [0, 2]");
			} else {
				return parse_error(where + ": unknown key '" + key +
						   "' (known: Nodes, Gpus, GpuType, Partition, Kind, "
						   "Loanable, Fluctuation)");
			}
		}
		if (!any)
			continue;
		if (count < 0 || gpus < 0)
			return parse_error(where + ": Nodes= and Gpus= are required");
		add_nodes(cluster, count, static_cast<int>(gpus), type, partition,
			  kind == "inference" ? PartitionKind::kInference : PartitionKind::kTraining,
			  loanable == "yes", fluctuation);
	}
	if (nodes.empty())
		return parse_error(spec + ": no nodes described");
	return cluster;
}

}  // namespace dlsched::sim
