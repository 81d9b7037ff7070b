// Request-level serving of a deployment (`migserve serve`, docs/capacity.md):
// per service, requests arrive at load x its required rate (Poisson, or a
// gamma renewal process of a chosen coefficient of variation), are routed to
// its replicas (RequestRouter), and each replica serves them as a dynamic
// batcher (queueing::ReplicaQueue) with batch times from the profile rows.
// An LLM service is served at token level instead (docs/llm.md): each
// replica receives its credit's share of the offered rate, with the
// arrivals its router gives it, through the continuous batcher's
// simulation on its slice (llm/batcher_simulation.h).
// Services do not share replicas, so each is simulated on its own, from its
// own seed: deterministic for a given seed.
#ifndef MIGSERVE_SERVING_SERVE_H_
#define MIGSERVE_SERVING_SERVE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "boundary/number.h"
#include "cluster/cluster_state.h"
#include "llm/balanced_batchers.h"
#include "profile/profile_table.h"
#include "queueing/arrivals.h"
#include "serving/request_router.h"
#include "util/progress_timer.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::serving {

// A run's offered load, its length, and the arrivals it may simulate in
// all (each is held until its service's quantiles are taken).
inline constexpr NumberRange kLoadRange{1e-3, 1000};
inline constexpr NumberRange kDurationRange{1e-3, 1e6};
inline constexpr double kMaxArrivals = 1e8;

struct ServeOptions {
  double load = 1.0;  // x each service's required rate
  queueing::ArrivalProcess arrivals;
  RoutingPolicy routing = RoutingPolicy::kProxies;
  int proxies = 2;                          // RoutingPolicy::kProxies
  InGroup in_group = InGroup::kRoundRobin;  // RoutingPolicy::kGroupThenReplica
  double max_queue_delay_ms = 0;            // 0: greedy batching
  double duration_s = 30;                   // arrivals in [0, duration)
  double warmup_s = 3;  // requests arriving before are not counted
  uint64_t seed = 1;
  // What-ifs for LLM services (docs/llm.md, "Margin"): every step's memory
  // and compute time x llm_step_scale (1.1: hardware 10% slower than
  // modelled), and llm_step_overhead_ms more a step. The credits stay.
  double llm_step_scale = 1;
  double llm_step_overhead_ms = 0;
  // How the proxies spread the requests of an LLM service whose credits
  // count prefix-cache hits (RoutingPolicy::kProxies; `router
  // --llm-balancing`); the others', as the proxy, by requests in flight.
  llm::Balancing llm_balancing = llm::Balancing::kAffinity;

  // Returns InvalidArgument naming the first bad option.
  Status Validate() const;
};

// An LLM service's token figures (docs/llm.md): p50 and p99 time to first
// token and per output token against its SLOs, and the mean share of its
// replicas' KV cache in use, and what the slices' step times rest on.
struct LlmServing {
  double ttft_slo_ms = 0, tpot_slo_ms = 0;
  // The bases of its replicas' figures (llm/calibration.h): "modelled",
  // "measured", "calibrated on PROFILE"; those that differ joined by "; ".
  std::string basis = "modelled";
  double ttft_p50_ms = 0, ttft_p99_ms = 0;
  double tpot_p50_ms = 0, tpot_p99_ms = 0;
  double kv_occupancy = 0;
  // The share of the prompts' tokens found in the prefix cache, as the
  // balancing delivers it (llm::BatcherSamples::prefix_cache_hit_rate):
  // the workload's prefix_cache_hit_rate, which the credits count, where
  // every conversation keeps to its replica.
  double prefix_cache_hit_rate = 0;
  bool ok() const {
    return ttft_p99_ms <= ttft_slo_ms && tpot_p99_ms <= tpot_slo_ms;
  }
};

struct ServiceServing {
  std::string service;
  double slo_ms = 0;
  double required = 0;  // req/s
  double offered = 0;   // load x required
  int replicas = 0;
  long requests = 0;  // arrived after the warm-up
  long served = 0;    // of all arrivals, served by the end (all of them)
  long arrived = 0;   // all arrivals
  double mean_ms = 0;
  double p50_ms = 0;
  double p90_ms = 0;
  double p99_ms = 0;
  double within_slo = 0;   // fraction of counted requests
  double achieved = 0;     // completions per second after the warm-up
  double saturation = 0;   // the rate at which a replica saturates first
  double utilization = 0;  // offered / saturation
  bool stable = false;     // utilization < 1
  // The token figures of a service simulated token by token (its kind's
  // credit from the token model); none for one simulated request by
  // request.
  std::optional<LlmServing> tokens = std::nullopt;
  bool ok() const {
    return requests > 0 && p99_ms <= slo_ms && (!tokens || tokens->ok());
  }
};

struct ServeReport {
  std::vector<ServiceServing> services;
  bool ok() const;
};

// Serves `workload`'s services on `state`'s replicas. A replica's batch
// times come from the row of its model, GPU model, profile, batch and
// processes. Returns InvalidArgument naming a replica whose row is not in
// `profiles` or whose service is not in the workload; a service without
// replicas is reported with no requests served.
// How far Serve is: once a service is done (`done` set), and while one
// runs, at least every `every_s` seconds of wall clock (`done` null).
struct ServeProgress {
  const std::string& service;
  size_t index;  // 1-based, of `total` services
  size_t total;
  double simulated_s;          // of arrivals, so far
  const ServiceServing* done;  // the service's result once it is done
};
struct ServeProgressSink {
  std::function<void(const ServeProgress&)> report;  // may be empty
  double every_s = kProgressEveryS;
};

StatusOr<ServeReport> Serve(const cluster::ClusterState& state,
                            const workload::Workload& workload,
                            const profile::ProfileTable& profiles,
                            const ServeOptions& options,
                            const ServeProgressSink& progress = {});

}  // namespace migserve::serving

#endif  // MIGSERVE_SERVING_SERVE_H_
