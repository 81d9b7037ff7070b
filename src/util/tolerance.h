// The slack of floating-point comparisons, named in one place. Rates and
// capacities are sums of measured throughputs, so a service that is exactly
// at its requirement may come out a few ulps short of it.
#ifndef MIGSERVE_UTIL_TOLERANCE_H_
#define MIGSERVE_UTIL_TOLERANCE_H_

namespace migserve {

// Relative: a rate (or satisfaction) reaches its target r when it is at
// least r * (1 - kRateTolerance); one that passes a measured maximum m when
// it is above m * (1 + kRateTolerance).
inline constexpr double kRateTolerance = 1e-9;

// Absolute, in requests per second: the controller's floors, the safety
// checker's and the planner's capacity comparisons.
inline constexpr double kCapacityTolerance = 1e-6;

// Absolute, for counts and bounds computed in floating point: they are
// rounded up after subtracting it (150.0000000001 GPUs is 150 GPUs), and a
// margin of 1 + kRoundingTolerance keeps a pruning bound from cutting off
// an equal candidate.
inline constexpr double kRoundingTolerance = 1e-9;

// Absolute: comparisons that only order or prune candidates, where a tie
// either way is harmless.
inline constexpr double kTieTolerance = 1e-12;

// Absolute, in GPUs or cost units: the MILP's comparisons of objective
// values, which are sums of integer costs computed in floating point.
inline constexpr double kCostTolerance = 1e-6;

}  // namespace migserve

#endif  // MIGSERVE_UTIL_TOLERANCE_H_
