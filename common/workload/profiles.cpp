// Loading the bundled per-model profiles into a ModelCatalog. The derivation of the scaling curves is
// described in contribs/profiles/README.md.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sys/stat.h>

#include "util/csv.h"
#include "workload/workload.h"

#ifndef DLSCHED_PKGDATADIR
#define DLSCHED_PKGDATADIR "/usr/local/share/dlsched"
#endif
#ifndef DLSCHED_SRCDIR
#define DLSCHED_SRCDIR "."
#endif

namespace dlsched {

namespace {

bool is_dir(const std::string& path)
{
	struct stat st;
	return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Reads a CSV with a header into rows of named fields; every listed column must be present.
Status read_table(const std::string& path, const std::vector<std::string>& columns,
		  std::vector<std::map<std::string, std::string>>& rows)
{
	std::ifstream in(path);
	if (!in)
		return not_found(path +
				 ": cannot open profile file (is ModelProfiles / --profiles the "
				 "profiles directory of dlsched's data?)");
	CsvReader csv(in, path);
	std::vector<CsvField> header, fields;
	Status err;
	if (!csv.next(header, err) || !err.is_ok())
		return err.is_ok() ? parse_error(path + ": empty file, expected a header line") : err;
	std::vector<int> index(columns.size(), -1);
	for (std::size_t c = 0; c < columns.size(); ++c)
		for (std::size_t h = 0; h < header.size(); ++h)
			if (header[h].text == columns[c])
				index[c] = static_cast<int>(h);
	for (std::size_t c = 0; c < columns.size(); ++c)
		if (index[c] < 0)
			return parse_error(path + ":1: missing column '" + columns[c] + "'");
	while (csv.next(fields, err)) {
		if (!err.is_ok())
			return err;
		if (fields.size() != header.size())
			return parse_error(csv.where(1) + "expected " + std::to_string(header.size()) +
					   " fields, found " + std::to_string(fields.size()));
		std::map<std::string, std::string> row;
		for (std::size_t c = 0; c < columns.size(); ++c)
			row[columns[c]] = fields[static_cast<std::size_t>(index[c])].text;
		row["@where"] = csv.where(1);
		rows.push_back(std::move(row));
	}
	return Status::ok();
}

Status number(const std::map<std::string, std::string>& row, const std::string& col, double& out)
{
	if (!parse_number(row.at(col), out) || out <= 0)
		return parse_error(row.at("@where") + col + " '" + row.at(col) +
				   "' is not a positive number");
	return Status::ok();
}

struct Measurement {
	int gpus;
	int nodes;
	double bsz;
	double step_time;
};

// Throughput-based scaling points of one model at per-GPU batch size `bsz` (nearest measured batch
// size, in log space, for each configuration).
Status load_pollux_points(const std::string& dir, const std::string& model, double bsz,
			  std::vector<ScalingPoint>& points, double& samples_per_s_1gpu, std::string& source)
{
	std::vector<Measurement> ms;
	std::vector<std::map<std::string, std::string>> rows;
	const std::string scal = dir + "/pollux/" + model + "/scalability.csv";
	Status st = read_table(scal, {"num_nodes", "num_replicas", "local_bsz", "step_time"}, rows);
	if (!st.is_ok())
		return st;
	for (const auto& r : rows) {
		double n, k, b, t;
		for (auto [col, out] : {std::pair<const char*, double*>{"num_nodes", &n},
					{"num_replicas", &k},
					{"local_bsz", &b},
					{"step_time", &t}}) {
			st = number(r, col, *out);
			if (!st.is_ok())
				return st;
		}
		ms.push_back({static_cast<int>(k), static_cast<int>(n), b, t});
	}
	rows.clear();
	const std::string plc = dir + "/pollux/" + model + "/placements.csv";
	st = read_table(plc, {"placement", "local_bsz", "step_time"}, rows);
	if (!st.is_ok())
		return st;
	for (const auto& r : rows) {
		const std::string& p = r.at("placement");
		int gpus = 0;
		for (char c : p) {
			if (c < '1' || c > '9')
				return parse_error(r.at("@where") + "placement '" + p +
						   "' is not a string of per-node GPU counts");
			gpus += c - '0';
		}
		double b, t;
		st = number(r, "local_bsz", b);
		if (st.is_ok())
			st = number(r, "step_time", t);
		if (!st.is_ok())
			return st;
		ms.push_back({gpus, static_cast<int>(p.size()), b, t});
	}

	// For each (gpus, nodes): the batch size nearest to `bsz`, then the mean throughput there.
	std::map<std::pair<int, int>, double> nearest;
	for (const Measurement& m : ms) {
		double d = std::fabs(std::log(m.bsz / bsz));
		auto key = std::make_pair(m.gpus, m.nodes);
		auto it = nearest.find(key);
		if (it == nearest.end() || d < it->second)
			nearest[key] = d;
	}
	std::map<std::pair<int, int>, std::pair<double, int>> thr;
	for (const Measurement& m : ms) {
		auto key = std::make_pair(m.gpus, m.nodes);
		if (std::fabs(std::fabs(std::log(m.bsz / bsz)) - nearest[key]) > 1e-9)
			continue;
		thr[key].first += m.gpus * m.bsz / m.step_time;
		thr[key].second += 1;
	}
	auto one = thr.find({1, 1});
	if (one == thr.end())
		return parse_error(plc + ": no single-GPU measurement (placement '1') for " + model);
	const double base = one->second.first / one->second.second;
	samples_per_s_1gpu = base;
	for (const auto& kv : thr)
		points.push_back(
			{kv.first.first, kv.first.second, kv.second.first / kv.second.second / base});
	source = "Pollux OSDI'21 artifact (" + scal + ", " + plc + ")";
	return Status::ok();
}

}  // namespace

std::string default_data_dir()
{
	if (const char* env = std::getenv("DLSCHED_DATADIR"))
		if (*env)
			return env;
	if (is_dir(std::string(DLSCHED_PKGDATADIR) + "/profiles"))
		return DLSCHED_PKGDATADIR;
	return std::string(DLSCHED_SRCDIR) + "/contribs";
}

Result<ModelCatalog> load_model_catalog(const std::string& dir_in)
{
	const std::string dir = dir_in.empty() ? default_data_dir() + "/profiles" : dir_in;
	if (!is_dir(dir))
		return not_found(dir +
				 ": profile directory not found (set ModelProfiles= in dlsched.conf, "
				 "--profiles, or DLSCHED_DATADIR)");

	// Gavel's isolated throughputs: job type -> GPU type -> steps/s.
	std::vector<std::map<std::string, std::string>> gavel_rows;
	Status st = read_table(dir + "/gavel/isolated.csv", {"job_type", "k80", "p100", "v100"}, gavel_rows);
	if (!st.is_ok())
		return st;
	std::map<std::string, std::map<std::string, double>> gavel;
	for (const auto& r : gavel_rows)
		for (const char* g : {"k80", "p100", "v100"}) {
			double v;
			st = number(r, g, v);
			if (!st.is_ok())
				return st;
			gavel[r.at("job_type")][g] = v;
		}

	std::vector<std::map<std::string, std::string>> models;
	st = read_table(dir + "/models.csv",
			{"model", "local_bsz", "gavel_job_type", "checkpoint_mb", "epochs",
			 "samples_per_epoch", "sample_kb"},
			models);
	if (!st.is_ok())
		return st;
	ModelCatalog catalog;
	for (const auto& m : models) {
		ModelProfile p;
		p.name = m.at("model");
		double bsz;
		st = number(m, "local_bsz", bsz);
		if (st.is_ok())
			st = number(m, "checkpoint_mb", p.checkpoint_mb);
		if (st.is_ok())
			st = number(m, "epochs", p.reference_epochs);
		if (st.is_ok())
			st = number(m, "samples_per_epoch", p.samples_per_epoch);
		if (st.is_ok())
			st = number(m, "sample_kb", p.sample_kb);
		if (st.is_ok())
			st = load_pollux_points(dir, p.name, bsz, p.points, p.samples_per_s_1gpu, p.source);
		if (!st.is_ok())
			return st;
		auto g = gavel.find(m.at("gavel_job_type"));
		if (g == gavel.end())
			return parse_error(m.at("@where") + "gavel_job_type '" + m.at("gavel_job_type") +
					   "' is not in " + dir + "/gavel/isolated.csv");
		for (const auto& kv : g->second)
			p.gpu_speed[kv.first] = kv.second / g->second.at(ModelCatalog::kReferenceGpuType);
		p.source += "; GPU-type speeds: Gavel OSDI'20 (" + g->first + ")";
		catalog.add(std::move(p));
	}
	if (catalog.size() == 0)
		return parse_error(dir + "/models.csv: no models listed");
	return catalog;
}

}  // namespace dlsched
