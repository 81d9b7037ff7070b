// The exact model's lower bounds, as its callers outside the solver read
// them (milp_optimizer.h's LpBound, `compare`): no solver type in sight.
#ifndef MIGSERVE_OPTIMIZER_MILP_LP_BOUNDS_H_
#define MIGSERVE_OPTIMIZER_MILP_LP_BOUNDS_H_

namespace migserve::optimizer::milp {

// Lower bounds on the GPU count that respect MIG's rules (their ceilings).
struct LpBounds {
  double lp = 0;    // the model's LP relaxation
  double cuts = 0;  // the LP with service cuts (optimizer/service_cuts.h)
};

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_LP_BOUNDS_H_
