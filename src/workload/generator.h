// Paper-style workloads (section 7): n services over the measured models,
// request rates drawn from a normal or lognormal distribution and scaled so
// that the relaxed lower bound is a given number of GPUs.
#ifndef MIGSERVE_WORKLOAD_GENERATOR_H_
#define MIGSERVE_WORKLOAD_GENERATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile_table.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::workload {

enum class RateDistribution { kNormal, kLognormal };

struct GenerateOptions {
  std::string gpu = "A100-SXM4-80GB";
  int services = 24;
  // Models to draw from, in turn; empty: every model measured on the GPU.
  std::vector<std::string> models;
  RateDistribution distribution = RateDistribution::kNormal;
  // Normal: mean and standard deviation of the rate before scaling (rates
  // are kept >= 5% of the mean). Lognormal: the log's mean is 0 and its
  // standard deviation is `sigma`; the rate is mean * exp(N(0, sigma)).
  double mean = 1000;
  double stddev = 300;
  double sigma = 1.0;
  // Each service's SLO latency is drawn uniformly from this list.
  std::vector<double> latencies_ms = {100};
  // Scale rates so the relaxed bound is this many GPUs (0: do not scale).
  int target_gpus = 0;
  double latency_budget = 1.0;
  queueing::CapacityModel capacity_model = queueing::CapacityModel::kP99;
  int max_procs = 1;
  uint64_t seed = 1;

  // Returns InvalidArgument naming the first bad option.
  Status Validate() const;
};

// Returns the generated workload. Services are named <model>-<k>. Fails
// with InvalidArgument if a model is not measured on the GPU or a service
// cannot meet its latency on any profile.
StatusOr<Workload> GenerateWorkload(const profile::ProfileTable& profiles,
                                    const GenerateOptions& options);

}  // namespace migserve::workload

#endif  // MIGSERVE_WORKLOAD_GENERATOR_H_
