// The multiple-choice knapsack that `mckp` solves (Lyra/Aryl's elastic allocation): classes of
// options, one option chosen per class, option e of a class weighing e units and worth values[e];
// maximise the total worth within a capacity.
#ifndef DLSCHED_POLICY_MCKP_H
#define DLSCHED_POLICY_MCKP_H

#include <vector>

namespace dlsched {

struct MckpSolution {
	double value = 0;         // the best total
	std::vector<int> choice;  // per class, the option (units) chosen
};

// Exact, by dynamic programming over the capacity: O(capacity x total options) time and
// O(classes x capacity) memory for the choices. values[k][e] is class k's worth with e units
// (values[k] must not be empty; option 0 is "no units"). Among equal totals, the earlier classes
// (the more urgent jobs) get the units. capacity < 0 counts as 0.
MckpSolution solve_mckp(const std::vector<std::vector<double>>& values, int capacity);

}  // namespace dlsched

#endif
