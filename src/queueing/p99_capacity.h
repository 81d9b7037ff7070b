// The capacity of a replica under an SLO on a latency quantile: the highest
// arrival rate at which the quantile of its requests' latency (waiting for a
// batch to form and for a free process, then the batch) stays within the
// SLO (docs/capacity.md). Found by simulating the replica (ReplicaQueue,
// greedy batching) on one fixed stream of arrivals scaled to each rate
// tried, and bisecting on the rate; a rate passes when the requests over the
// SLO are fewer than the quantile allows by one standard error of their
// count. Results are cached, so each question is simulated once per process.
//
// The arrivals a replica sees at each rate tried are those its service's
// traffic gives it there (queueing/traffic.h: the service's stream and the
// router that splits it); with a default Traffic, Poisson arrivals.
#ifndef MIGSERVE_QUEUEING_P99_CAPACITY_H_
#define MIGSERVE_QUEUEING_P99_CAPACITY_H_

#include <vector>

#include "queueing/batch_curve.h"
#include "queueing/replica_queue.h"
#include "queueing/traffic.h"

namespace migserve::queueing {

struct QuantileSearch {
  double quantile = 0.99;
  int requests = 100000;     // simulated per rate tried
  double warmup = 0.1;       // fraction of them left out of the quantile
  double tolerance = 0.004;  // of the saturation rate
};

// Returns the highest rate (req/s, a multiple of tolerance x saturation
// below the replica's saturation rate) at which the replica's latency
// quantile is within `slo_ms`, its arrivals those `traffic` gives it at
// that rate; 0 if even a lone request exceeds the SLO.
double QuantileCapacity(const BatchCurve& curve, const BatcherConfig& config,
                        double slo_ms, const Traffic& traffic = {},
                        const QuantileSearch& search = {});

// Returns true if the replica's latency quantile at `rate` is within
// `slo_ms` (arrivals as QuantileCapacity's).
bool QuantileHolds(const BatchCurve& curve, const BatcherConfig& config,
                   double slo_ms, const Traffic& traffic, double rate,
                   const QuantileSearch& search = {});

// The latency quantile (ms) of the replica at `rate` with arrivals of
// `shape`, on the search's stream.
double LatencyQuantileMs(const BatchCurve& curve, const BatcherConfig& config,
                         double rate, const ArrivalShape& shape,
                         const QuantileSearch& search = {});

// The `q` quantile of `values` by nearest rank (the smallest value with at
// least q of them at or below it); reorders `values`. 0 if empty.
double Quantile(std::vector<double>* values, double q);

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_P99_CAPACITY_H_
