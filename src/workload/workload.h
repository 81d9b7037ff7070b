// Services with SLOs, and the GPU they are to run on (DESIGN 3).
#ifndef MIGSERVE_WORKLOAD_WORKLOAD_H_
#define MIGSERVE_WORKLOAD_WORKLOAD_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "boundary/quantity.h"
#include "llm/calibration.h"
#include "llm/llm_credit.h"
#include "llm/llm_model.h"
#include "llm/llm_terms.h"
#include "mig/gpu_model.h"
#include "queueing/capacity_model.h"
#include "queueing/router_kind.h"
#include "workload/service_kind.h"

namespace migserve::workload {

// `observe: {rate, p99_ms}`: the PromQL queries `migserve autoscale` reads
// a service's request rate (req/s) and p99 latency (ms) with, in place of
// the defaults on Triton's metrics (docs/autoscale.md). Empty: the default.
struct ObserveQueries {
  std::string rate;
  std::string p99_ms;

  bool operator==(const ObserveQueries&) const = default;
};

struct Service {
  std::string name;
  std::string model;
  // Required, requests (samples) per second: made only by its check
  // (boundary/quantity.h), where the workload or deployment is read or a
  // command derives one.
  Rate throughput = Rate::Least();
  double latency_ms = 0;  // SLO latency
  int line = 0;           // line in the source file; 0 if made in memory
  int min_replicas = 1;   // replicas the deployment must give it at least
  ObserveQueries observe = {};
  // What it is (workload/service_kind.h): `kind: dnn`, the default, or
  // `kind: llm` (docs/llm.md), a language model of the workload's LLM table
  // served by a continuous batcher, whose throughput is requests/s and
  // latency_ms the p99 request latency (by default TTFT + TPOT x the mean
  // output x (1 + 3 x its cv)).
  ServiceKind kind = {};
  // The token terms, present exactly when kind.HasTokenTerms(); their
  // latency_ms is the service's.
  std::optional<llm::LlmTerms> tokens = std::nullopt;
  // With token terms, its model's entry in the table its credits are
  // searched with (the workload's llm_models; a deployment's own, else the
  // shipped one): what follows the service (export's engine settings, the
  // names its replicas answer to, the peaks a reader checks) reads this,
  // not the shipped table. Null where the table lacks the model.
  std::shared_ptr<const llm::LlmModel> llm_model = nullptr;
};

// A GPU type the workload may use, and its cost per GPU-hour.
struct GpuOffer {
  std::string name;
  double cost = 1;

  bool operator==(const GpuOffer&) const = default;
};

// What one failure takes away: one GPU, or one node (a placed GPU's
// `node`; an unplaced deployment's GPU id / 8, as the simulated cluster
// reads it).
enum class FailureDomain { kGpu, kNode };

// `survive: {domain, keep}`: after losing any one failure domain, every
// service keeps at least `keep` x its required rate (docs/capacity.md,
// "Redundancy").
struct Survive {
  FailureDomain domain = FailureDomain::kGpu;
  double keep = 1;

  bool operator==(const Survive&) const = default;
};

// "gpu" or "node".
const char* FailureDomainName(FailureDomain domain);
// The domain of that name, or nullopt.
std::optional<FailureDomain> ParseFailureDomain(std::string_view name);

// Where a workload file is a ServingWorkload manifest (`kubectl get
// servingworkload NAME -o yaml`, or the one kept in git): the resource its
// spec is, so that a deployment made from it can say which version.
struct WorkloadResource {
  std::string name;          // "NAMESPACE/NAME"; "" without a namespace
  long long generation = 0;  // metadata.generation; 0 where it has none
};

struct Workload {
  std::string source;  // file it came from, for messages
  // Set where the file was a ServingWorkload manifest.
  std::optional<WorkloadResource> resource;
  std::string gpu;  // the first offer's GPU
  // The GPU types it may use (`gpus: [{name, cost}]`); one offer of `gpu`
  // at cost 1 when the file names only `gpu`. More than one: a mixed fleet.
  std::vector<GpuOffer> offers;
  double latency_budget = 1.0;  // profile latency <= budget * SLO latency
  // What a replica is credited with (docs/capacity.md): p99 keeps each
  // replica's p99 latency within the SLO under Poisson arrivals; paper
  // credits the measured throughput (paper 7).
  queueing::CapacityModel capacity_model = queueing::CapacityModel::kP99;
  // What carries the traffic to the replicas, and how bursty it is
  // (queueing/router_kind.h, traffic.h): p99 credits hold for the arrivals a
  // replica sees behind that router when the gaps between a service's requests
  // have coefficient of variation `arrival_cv` (1: Poisson).
  queueing::RouterKind router{};  // proxy
  int router_replicas = 2;        // proxy instances (router: proxy)
  double arrival_cv = 1;
  // Spare capacity: credits cover (1 + headroom) x each service's required
  // rate (docs/capacity.md, "Redundancy").
  double headroom = 0;
  std::optional<Survive> survive;  // none: no failure is provided for
  int max_procs = 1;               // MPS processes per instance (1: MIG only)
  mig::MigOptions mig;             // legacy_4g3g, optional_profiles
  std::vector<Service> services;
  // The models LLM services name: `llm_models: FILE`, else the shipped
  // table (data/llm/models.yaml). Null while no service is an LLM's.
  std::shared_ptr<const llm::LlmModelTable> llm_models;
  std::string llm_models_file;  // as the workload names it; "" if shipped
  // Measured LLM runs correcting the model's figures: `llm_measurements:
  // FILE` (llm/calibration.h). Null: every LLM figure is modelled.
  std::shared_ptr<const llm::Calibrations> llm_calibrations;
  std::string llm_measurements_file;  // as the workload names it
  // The share by which an LLM replica's steps may be slower than its
  // figures (modelled or calibrated) and its credit still keep the SLOs:
  // credits are searched with every step (1 + llm_margin) x as long
  // (docs/llm.md, "Margin"). 0: the figures exactly.
  double llm_margin = 0.15;
  // The LLM engines chunk long prefills into steps of a token budget
  // (vLLM V1's default); false: each prompt prefills whole in the step it
  // joins, as engines without chunked prefill do (docs/llm.md).
  bool llm_chunked_prefill = true;

  // Returns the index of the service named `name`, or -1.
  int FindService(const std::string& name) const;
  // The rate `service`'s credits must cover: its required rate with the
  // headroom.
  double Demand(const Service& service) const {
    return (1 + headroom) * service.throughput.value();
  }
  // The rate `service` must keep after losing one failure domain: keep x
  // its required rate; 0 without `survive`.
  double Kept(const Service& service) const {
    return survive ? survive->keep * service.throughput.value() : 0;
  }
  // The terms `service` is served under: its rows' limits, its SLO and the
  // capacity model.
  queueing::ServiceTerms TermsOf(const Service& service) const;
  // The engine options of a replica of LLM `model` on `profile` of `gpu`,
  // corrected by the workload's measurements, and what backs them.
  llm::Calibrated LlmCalibration(const llm::LlmModel& model,
                                 const mig::GpuModel& gpu,
                                 const mig::Profile& profile) const {
    llm::Calibrated c = llm_calibrations
                            ? llm_calibrations->For(model, gpu, profile)
                            : llm::Calibrated{};
    if (!llm_chunked_prefill) c.engine.max_batched_tokens = -1;
    return c;
  }
  // The credit of one replica of LLM `service` on `profile` of `gpu`: its
  // model, lengths and SLOs, its traffic and the calibrated engine, asked
  // in one place, so that the capacity matrix and the validator cannot
  // ask two questions. REQUIRES: service.tokens, its model in llm_models.
  llm::LlmCredit LlmCreditOf(const Service& service, const mig::GpuModel& gpu,
                             const mig::Profile& profile) const;
};

}  // namespace migserve::workload

#endif  // MIGSERVE_WORKLOAD_WORKLOAD_H_
