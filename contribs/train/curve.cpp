#include "curve.h"

#include <cmath>
#include <cstdlib>
#include <fstream>

namespace dlsched::train {

Result<CurveCsv*> CurveCsv::open(const std::string& path, bool append)
{
	std::FILE* f = std::fopen(path.c_str(), append ? "a" : "w");
	if (!f)
		return Status(StatusCode::kIoError,
			      path + ": cannot write the curve (check the directory exists and is writable)");
	auto* c = new CurveCsv();
	c->f_ = f;
	if (!append)
		std::fprintf(
			f,
			"iteration,seconds,episodes,rounds,train_slowdown,val_slowdown,best_val_slowdown,"
			"policy_loss,value_loss,entropy\n");
	return c;
}

void CurveCsv::add(const CurvePoint& p)
{
	std::fprintf(f_, "%d,%.1f,%d,%zu", p.iteration, p.seconds, p.episodes, p.rounds);
	for (double v : {p.train_slowdown, p.val_slowdown, p.best_val_slowdown, p.policy_loss, p.value_loss,
			 p.entropy}) {
		if (std::isnan(v))
			std::fprintf(f_, ",");
		else
			std::fprintf(f_, ",%.5f", v);
	}
	std::fprintf(f_, "\n");
	std::fflush(f_);
}

CurveCsv::~CurveCsv()
{
	if (f_)
		std::fclose(f_);
}

void write_chart(const std::string& csv, const std::string& png)
{
	const std::string script = png + ".gp";
	std::ofstream g(script);
	g << "set terminal pngcairo size 900,500 noenhanced\n"
	  << "set output '" << png << "'\n"
	  << "set datafile separator ','\n"
	  << "set key top right\nset grid\n"
	  << "set title 'dlsched-train rl: validation average JCT / physical limit'\n"
	  << "set xlabel 'iteration'\nset ylabel 'avg JCT / bound'\n"
	  << "plot '" << csv << "' using 1:6 every ::1 with linespoints title 'validation (greedy)', "
	  << "'' using 1:5 every ::1 with lines title 'training episodes (sampled)'\n";
	g.close();
	const std::string cmd = "command -v gnuplot >/dev/null 2>&1 && gnuplot '" + script + "' 2>/dev/null";
	if (std::system(cmd.c_str()) != 0) {
		// pngcairo may be missing (gnuplot-nox has png): try the plain png terminal.
		std::string alt = "sed -i 's/pngcairo/png/' '" + script +
				  "' && command -v gnuplot >/dev/null 2>&1 && gnuplot '" + script + "'";
		if (std::system(alt.c_str()) != 0)
			std::fprintf(stderr,
				     "dlsched-train: gnuplot not found: no %s (the curve is in %s; apt-get "
				     "install gnuplot-nox)\n",
				     png.c_str(), csv.c_str());
	}
	std::remove(script.c_str());
}

}  // namespace dlsched::train
