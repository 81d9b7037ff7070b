// What `migserve autoscale` observes of each service through Prometheus
// (docs/autoscale.md): its request rate at each step of the policy's
// window and its latest p99 latency, by default from Triton's metrics
// (nv_inference_count, the samples served; the p99 of the latency summary
// nv_inference_request_summary_us, when Triton exports summaries), or from
// the queries of the service's `observe:` block. A series that is missing,
// ambiguous or stale is named, and the service is not observed (unknown to
// the policy), never read as zero traffic.
#ifndef MIGSERVE_AUTOSCALE_OBSERVER_H_
#define MIGSERVE_AUTOSCALE_OBSERVER_H_

#include <string>
#include <vector>

#include "autoscale/policy.h"
#include "autoscale/prometheus_client.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::autoscale {

struct ObserveOptions {
  // The label that carries the service's name on its replicas' series (a
  // relabeling of the pods' migserve.io/service label; docs/autoscale.md).
  std::string service_label = "migserve_service";
  std::string rate_window = "1m";  // of rate() in the default rate query
  double step_s = 30;              // between the window's observations
};

// The default queries for `service`. The rate is the sum of its replicas'
// rates, given only while every replica that answers has one: a replica's
// series has a rate() only from its second sample in the window, and keeps
// one for a window after it is gone, so while a move replaces replicas the
// plain sum dips by the new ones' traffic and rises back after (which the
// policy's trend would read as a rise). Those steps are unknown instead; a
// service whose replicas answer (DefaultReplicasQuery > 0) but whose rate
// gives no sample now is changing, not stale, and is judged on the steps
// it has.
std::string DefaultRateQuery(const std::string& service,
                             const ObserveOptions& options);
std::string DefaultReplicasQuery(const std::string& service,
                                 const ObserveOptions& options);
std::string DefaultP99Query(const std::string& service,
                            const ObserveOptions& options);
// The same for a `kind: llm` service, on vLLM's metrics (docs/llm.md): its
// finished requests (vllm:request_success_total, every finish reason; the
// workload's rate is requests/s), its replicas by their running-requests
// gauge, and the p99 of vllm:e2e_request_latency_seconds in ms, judged
// with its token p99s (LlmP99Ms).
std::string VllmRateQuery(const std::string& service,
                          const ObserveOptions& options);
std::string VllmReplicasQuery(const std::string& service,
                              const ObserveOptions& options);
std::string VllmP99Query(const std::string& service,
                         const ObserveOptions& options);
// Its p99 time to first token (vllm:time_to_first_token_seconds) and time
// per output token, in ms: per request where the vLLM has it
// (vllm:request_time_per_output_token_seconds), else its inter-token
// latency (vllm:inter_token_latency_seconds, earlier
// vllm:time_per_output_token_seconds).
std::string VllmTtftP99Query(const std::string& service,
                             const ObserveOptions& options);
std::string VllmTpotP99Query(const std::string& service,
                             const ObserveOptions& options);

// What the policy reads as an LLM service's p99 (it judges one latency
// against one SLO): the worst of its p99 request latency, TTFT and TPOT,
// each as a share of its own SLO, on the request latency's scale
// (`latency_slo_ms` x the largest share). A p99 not observed (NaN) takes
// no part; NaN if none was.
double LlmP99Ms(const llm::LlmTerms& terms, double latency_slo_ms,
                double request_p99_ms, double ttft_p99_ms, double tpot_p99_ms);

struct Observed {
  // One observation per step of (now - window, now], oldest first: each
  // service's rate (NaN where not observed) and, in the last, p99s.
  std::vector<Observation> window;
  // Per service not observed, or whose own p99 query gave nothing: why.
  std::vector<std::string> problems;
  // Per service: its replicas are changing (no rate now, not a problem).
  std::vector<bool> changing;
};

// Observes `services` over the `window_s` up to `now_s`. Returns the
// client's Unavailable when Prometheus cannot be asked (nothing is then
// observed); a query Prometheus refuses only makes its service a problem.
StatusOr<Observed> Observe(const PrometheusClient& prometheus,
                           const std::vector<workload::Service>& services,
                           const ObserveOptions& options, double now_s,
                           double window_s);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_OBSERVER_H_
