// The points of a load sweep (perf_analyzer's concurrencies or request
// rates, Model Analyzer's rows) and the two the importers read: the idle
// point, for the batch time, and the operating point, for the throughput.
#ifndef MIGSERVE_PROFILE_SWEEP_H_
#define MIGSERVE_PROFILE_SWEEP_H_

#include <optional>
#include <vector>

namespace migserve::profile {

struct SweepPoint {
  double load = 0;        // concurrency or request rate
  double throughput = 0;  // samples/s
  double idle_ms = 0;     // this point's estimate of the batch time
  std::optional<double> p50_ms;
  std::optional<double> p90_ms;
  double p99_ms = 0;
};

// The point of the lowest load (of those, the smallest idle_ms).
// REQUIRES: `points` is not empty.
const SweepPoint& IdlePoint(const std::vector<SweepPoint>& points);

// The first point of the highest throughput whose p99 is within `limit_ms`
// (any point without a limit); nullptr if none is.
const SweepPoint* BestPoint(const std::vector<SweepPoint>& points,
                            std::optional<double> limit_ms);

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_SWEEP_H_
