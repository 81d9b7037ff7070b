// Request arrivals: a renewal process whose gaps are exponential (Poisson
// arrivals) or gamma with a chosen coefficient of variation (burstier above
// 1, smoother below).
#ifndef MIGSERVE_QUEUEING_ARRIVALS_H_
#define MIGSERVE_QUEUEING_ARRIVALS_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "queueing/traffic.h"
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

// A unit-rate stream of `shape` (a replica's arrivals behind a router,
// queueing/traffic.h), deterministic for a seed: the service's stream with
// its gaps, thinned at random, spread at random over the channels, every
// `every`-th of each channel. With Poisson service arrivals the channels are
// independent Poisson streams, each giving Erlang gaps, merged.
//
// Otherwise the service's gaps are drawn only where a request is given: the
// sum of n gamma gaps of shape a is one gamma gap of shape n a, so the time
// to the next given request is one draw over the service's requests since
// the last, whose count is what the thinning and the channels decide (a
// replica taking every 64th of two proxies' requests costs one gamma draw,
// not 128).
class ShapedStream {
 public:
  ShapedStream(const ArrivalShape& shape, uint64_t seed);

  // The next arrival time, seconds.
  double Next();

 private:
  ArrivalShape shape_;
  std::vector<ArrivalStream> channels_;  // merged by their next arrival
  std::vector<double> next_;
  std::mt19937_64 rng_;
  // General case: per channel, requests seen; the service's requests since
  // the last one given, the gamma gaps' shape and scale, and the time.
  std::vector<int> count_;
  long since_ = 0;
  double shape_k_ = 1;
  double scale_ = 1;
  std::mt19937_64 gap_rng_;
  std::gamma_distribution<double> gap_;
  double now_ = 0;
};

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_ARRIVALS_H_
