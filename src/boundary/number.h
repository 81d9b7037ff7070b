// The ranges of the numbers migserve reads from files and flags. Every such
// number is finite (the parsers refuse inf and nan) and is checked against
// the range of what it measures here, so that what is computed from it (GPU
// and replica counts, simulated requests, solver coefficients) fits its
// type: a rate of 1e-320 req/s or a GPU cost of 1e308 is refused with its
// field named instead of overflowing a count downstream.
#ifndef MIGSERVE_BOUNDARY_NUMBER_H_
#define MIGSERVE_BOUNDARY_NUMBER_H_

#include <string>

namespace migserve {

struct NumberRange {
  double min = 0;  // the least allowed
  double max = 0;  // the most allowed
};

// Request rates, req/s: a service's required rate, a measured throughput.
inline constexpr NumberRange kRateRange{1e-3, 1e9};
// Latencies and latency SLOs, ms.
inline constexpr NumberRange kLatencyMsRange{1e-3, 1e7};
// A GPU's cost, in any unit.
inline constexpr NumberRange kCostRange{1e-6, 1e9};
// Memory, GB.
inline constexpr NumberRange kMemoryGbRange{0, 1e6};
// The coefficient of variation of a service's gaps between requests
// (arrival_cv, serve --cv): 0.1 is nearly periodic, 10 a stream of rare
// bursts; past it the credit searches' streams stop meaning anything.
inline constexpr NumberRange kArrivalCvRange{0.1, 10};
// Counts that are finite but open-ended (a concurrency, a load): >= 0.
inline constexpr NumberRange kNonNegativeRange{0, 1e15};
// GPUs in a fleet, an inventory or a limit: a region is tens of thousands.
inline constexpr int kMaxGpus = 1000000;
// GPUs in one node.
inline constexpr int kMaxGpusPerNode = 64;

// Whether `value` is finite and within `range`.
bool InRange(double value, const NumberRange& range);

// The rule a value out of `range` breaks: "must be from 0.001 to 1e+09".
std::string RangeRule(const NumberRange& range);

// Returns "" when `value` is finite and within `range`, else the reason:
// "must be from 0.001 to 1e+09, got inf".
std::string OutOfRange(double value, const NumberRange& range);

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_NUMBER_H_
