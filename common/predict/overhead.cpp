#include "predict/overhead.h"

#include <algorithm>
#include <cmath>

#include "predict/predict.h"

namespace dlsched::predict {

namespace {

double checkpoint_mb(const ModelCatalog& models, int model)
{
	return model >= 0 && model < models.size() ? models.at(model).checkpoint_mb : 0;
}

int nodes_spanned(const Job& j)
{
	return std::max<int>(1, static_cast<int>(j.placement.size()));
}

// Seconds of training the job still needs at its current speed.
double remaining_s(const Job& j, double epoch_s)
{
	return j.epochs_left() * epoch_s;
}

}  // namespace

OverheadParams OverheadParams::from_config(const Config& c)
{
	OverheadParams p;
	p.epoch_safe_points = c.get_string("CheckpointAt") != "iteration";
	p.write_mbps = c.get_double("StorageWriteMBps");
	p.read_mbps = c.get_double("StorageReadMBps");
	p.warmup_fraction = c.get_double("WarmupFraction");
	p.warmup_seconds = c.get_double("WarmupSeconds");
	return p;
}

double checkpoint_write_s(const ModelCatalog& models, int model, const OverheadParams& p)
{
	return checkpoint_mb(models, model) / p.write_mbps;
}

double checkpoint_read_s(const ModelCatalog& models, int model, const OverheadParams& p)
{
	return checkpoint_mb(models, model) / p.read_mbps;
}

double epoch_seconds(const Job& j, const ModelCatalog& models)
{
	const int gpus = j.running() ? j.gpus_allocated : j.gpus_requested;
	if (j.epoch_time_1gpu <= 0 || gpus <= 0)
		return 0;
	return j.epoch_time_1gpu / models.speedup(j.model, gpus, nodes_spanned(j));
}

PreemptionCost profile_cost(const Job& j, const ModelCatalog& models, const OverheadParams& p)
{
	PreemptionCost c;
	const double epoch = epoch_seconds(j, models);
	const double frac = j.epochs_done - std::floor(j.epochs_done);
	c.since_checkpoint = frac * epoch;
	c.to_safe_point = p.epoch_safe_points ? std::min((1.0 - frac) * epoch, remaining_s(j, epoch)) : 0.0;
	c.checkpoint_write = checkpoint_write_s(models, j.model, p);
	c.resume = checkpoint_read_s(models, j.model, p) + p.warmup_fraction * epoch + p.warmup_seconds;
	return c;
}

PreemptionCost measured_cost(const Job& j, const ModelCatalog& models, const OverheadParams& p,
			     const JobEvidence& e, double now)
{
	PreemptionCost c = profile_cost(j, models, p);
	const Estimate own_epoch =
		e.own && !e.own->runs.empty() ? steady_epoch_time(e.own->runs.back().epoch_s) : Estimate{};
	double epoch = own_epoch.known() ? own_epoch.value : epoch_seconds(j, models);
	double epoch_var = own_epoch.known() ? own_epoch.stddev * own_epoch.stddev : 0;
	if (!own_epoch.known() && e.model) {
		// Same-model jobs at this job's size, normalised by the measured scaling curve.
		const Estimate h = runtime_from_history(models, j.model, e.model->runs, 1.0,
							std::max(1, j.gpus_allocated), nodes_spanned(j));
		if (h.known()) {
			epoch = h.value;
			epoch_var = h.stddev * h.stddev;
			c.measured = true;
		}
	}
	c.measured = c.measured || own_epoch.known();
	// Where in its epoch it is: since its latest recorded epoch ended.
	double frac = j.epochs_done - std::floor(j.epochs_done);
	if (e.last_epoch_end_s >= 0 && epoch > 0)
		frac = std::clamp((now - e.last_epoch_end_s) / epoch, 0.0, 0.999);
	const bool at_iterations = e.fractional_saves || !p.epoch_safe_points;
	c.to_safe_point = at_iterations ? 0.0 : std::min((1.0 - frac) * epoch, remaining_s(j, epoch));
	double rest_var = at_iterations ? 0.0 : (1.0 - frac) * (1.0 - frac) * epoch_var;
	if (at_iterations) {
		std::vector<double> waits;
		if (e.own)
			waits = e.own->stop_waits;
		if (e.model)
			waits.insert(waits.end(), e.model->stop_waits.begin(), e.model->stop_waits.end());
		if (waits.empty() && e.cluster)
			waits = e.cluster->stop_waits;
		const Estimate w = mean_of(waits);
		if (w.known()) {
			c.to_safe_point = std::min(w.value, remaining_s(j, epoch));
			rest_var = w.stddev * w.stddev;
			c.measured = true;
		}
	}
	// Training since the latest checkpoint: from the checkpoint's time when it is later than the
	// epoch's start, else the epoch so far (a checkpoint at every epoch boundary).
	c.since_checkpoint = frac * epoch;
	if (e.last_checkpoint_s >= 0)
		c.since_checkpoint = std::min(c.since_checkpoint, std::max(0.0, now - e.last_checkpoint_s));
	// Checkpoint write and read at the measured bandwidths, of the measured size.
	const std::int64_t bytes = e.checkpoint_bytes > 0
					   ? e.checkpoint_bytes
					   : static_cast<std::int64_t>(checkpoint_mb(models, j.model) * 1e6);
	std::vector<Transfer> saves, loads;
	std::vector<Warmup> warmups;
	for (const JobMeasurements* m : {e.own}) {
		if (!m)
			continue;
		saves.insert(saves.end(), m->saves.begin(), m->saves.end());
		loads.insert(loads.end(), m->loads.begin(), m->loads.end());
		warmups.insert(warmups.end(), m->warmups.begin(), m->warmups.end());
	}
	if (e.model) {
		saves.insert(saves.end(), e.model->saves.begin(), e.model->saves.end());
		loads.insert(loads.end(), e.model->loads.begin(), e.model->loads.end());
		warmups.insert(warmups.end(), e.model->warmups.begin(), e.model->warmups.end());
	}
	if (e.cluster) {
		if (saves.empty())
			saves = e.cluster->saves;
		if (loads.empty())
			loads = e.cluster->loads;
		if (warmups.empty())
			warmups = e.cluster->warmups;
	}
	const Estimate write = suspend_cost(Estimate{}, 0, bytes, saves);
	double write_var = 0;
	if (write.known()) {
		c.checkpoint_write = write.value;
		write_var = write.stddev * write.stddev;
		c.measured = true;
	}
	// Asked while it writes the checkpoint of the epoch that just ended: that save answers, when it
	// ends (PickyMan's cheapest victim, the one just past a checkpoint).
	if (e.save_pending && e.last_epoch_end_s >= 0 && now >= e.last_epoch_end_s &&
	    now - e.last_epoch_end_s < c.checkpoint_write) {
		c.checkpoint_write -= now - e.last_epoch_end_s;
		c.to_safe_point = 0;
		c.since_checkpoint = 0;
		rest_var = 0;
	}
	// Resume: the read at the measured bandwidth, and the warm-up as the measured share of a steady
	// epoch, carried to this job's epoch (the warm-up scales with the epoch: see history.cpp).
	// Read back at the measured read speed; never read yet, at the measured write speed (the same
	// storage); else at the configured bandwidth.
	Estimate read = resume_cost(bytes, loads, {});
	if (!read.known())
		read = resume_cost(bytes, saves, {});
	double resume = read.known() ? read.value : static_cast<double>(bytes) / 1e6 / p.read_mbps;
	double resume_var = read.known() ? read.stddev * read.stddev : 0;
	// The mean of the signed shares: a run's first epoch is as often a little faster as slower than
	// the steady ones when there is no warm-up, and clipping each at 0 would predict one anyway.
	std::vector<double> shares;
	for (const Warmup& w : warmups)
		if (w.steady_epoch_s > 0 && w.first_epoch_s > 0)
			shares.push_back((w.first_epoch_s - w.steady_epoch_s) / w.steady_epoch_s);
	const Estimate ws = mean_of(shares);
	if (ws.known()) {
		resume += std::max(0.0, ws.value) * epoch;
		resume_var += (ws.stddev * epoch) * (ws.stddev * epoch);
		c.measured = true;
	} else {
		resume += p.warmup_fraction * epoch;
	}
	// A new process's start (framework, GPU context, model) comes before its first epoch, which is
	// where the measured warm-ups begin: it adds to them.
	resume += p.warmup_seconds;
	c.resume = resume;
	c.stddev = std::sqrt(rest_var + write_var + resume_var);
	return c;
}

}  // namespace dlsched::predict
