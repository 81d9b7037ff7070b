// Request arrivals: a renewal process whose gaps are exponential (Poisson
// arrivals) or gamma with a chosen coefficient of variation (burstier above
// 1, smoother below).
#ifndef MIGSERVE_QUEUEING_ARRIVALS_H_
#define MIGSERVE_QUEUEING_ARRIVALS_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

#include "util/status_or.h"

namespace migserve::queueing {

struct ArrivalProcess {
  enum class Kind { kPoisson, kGamma };
  Kind kind = Kind::kPoisson;
  double cv = 1;  // gamma: standard deviation / mean of a gap

  // Returns InvalidArgument unless cv > 0.
  Status Validate() const;
};

std::optional<ArrivalProcess::Kind> ParseArrivalKind(std::string_view name);

// Arrival times at `rate` requests per second from time 0, deterministic for
// a seed.
class ArrivalStream {
 public:
  ArrivalStream(const ArrivalProcess& process, double rate, uint64_t seed);

  // The next arrival time, seconds.
  double Next();

 private:
  std::mt19937_64 rng_;
  std::exponential_distribution<double> exponential_;
  std::gamma_distribution<double> gamma_;
  bool poisson_;
  double now_ = 0;
};

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_ARRIVALS_H_
