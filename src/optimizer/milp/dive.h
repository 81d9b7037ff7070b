// Dantzig-Wolfe diving for an incumbent of the exact model (DESIGN 5).
#ifndef MIGSERVE_OPTIMIZER_MILP_DIVE_H_
#define MIGSERVE_OPTIMIZER_MILP_DIVE_H_

#include <coin/OsiClpSolverInterface.hpp>
#include <optional>
#include <random>
#include <vector>

#include "optimizer/deadline.h"
#include "optimizer/milp/service_cuts.h"
#include "optimizer/options.h"

namespace migserve::optimizer::milp {

// Fixes one service at a time to its cheapest integer cover under the
// current duals of `root` (an optimal LP), re-solving with service cuts, as
// long as the LP stays at most `limit`. The services are tried in order of
// how near their LP instances are to their cover (with `rng`, the distances
// are randomized); if fixing one lifts the LP above the limit, the next is
// tried. CBC then places the last `options.dive_free` services and the
// layouts. Gives up at `deadline`. Returns the solution, or nothing.
std::optional<std::vector<double>> Dive(
    const OsiClpSolverInterface& root,
    const std::vector<ServiceColumns>& services, double limit,
    const MilpOptions& options, Clock::time_point deadline, std::mt19937* rng);

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_DIVE_H_
