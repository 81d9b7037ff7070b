// The service kinds (docs/design.md, "Where a new kind goes"): what a
// workload's `kind` names, `dnn` (the default) and `llm`. This registry is
// the one place that knows them. A kind is its name and its facets, each
// read by the room that acts on it and never by comparing kinds:
//   credit   how a replica's credit is found and what a service of the kind
//            carries beyond its name, model and rate: measured profile rows
//            under the capacity model (docs/capacity.md), or the LLM model's
//            token-level batcher on its slice (docs/llm.md), with the token
//            terms (llm::LlmTermFields: the fields a workload and a
//            deployment spell) that `Service::tokens` holds. `serve`
//            simulates a replica the same way: request by request, or token
//            by token.
//   engine   the server its replicas run by default: Triton or vLLM. It
//            picks the pod template export and the controller write
//            (kubernetes/serving_spec.h), the API the proxy speaks to it
//            (KServe v2, or OpenAI's routed by the body's model) and the
//            metrics the autoscaler reads by default (autoscale/observer.h).
// Adding a kind that combines facets that exist (an embedding model served
// from profile rows, say) is one RegisterServiceKind call; a new facet
// value is one enum value here, and every switch over that facet fails to
// compile until it handles it.
#ifndef MIGSERVE_WORKLOAD_SERVICE_KIND_H_
#define MIGSERVE_WORKLOAD_SERVICE_KIND_H_

#include <compare>
#include <optional>
#include <string>
#include <string_view>

#include "util/status_or.h"

namespace migserve::workload {

enum class CreditSource {
  kProfileRows,  // the best measured row's credit (queueing::BestCredit)
  kTokenModel,   // llm::CreditOf on the service's token terms
};

enum class Engine {
  kTriton,  // KServe v2; nv_inference_* metrics
  kVllm,    // the OpenAI API; vllm:* metrics (rate, TTFT and TPOT)
};

struct ServiceKindTraits {
  std::string name;  // a workload's `kind`
  CreditSource credit = CreditSource::kProfileRows;
  Engine engine = Engine::kTriton;
};

// A registered service kind: a handle to its traits, which live as long as
// the process. Kinds order by registration: dnn, llm, then any registered
// since.
class ServiceKind {
 public:
  ServiceKind();  // dnn, the default

  const ServiceKindTraits& traits() const;
  std::string_view name() const { return traits().name; }
  // Whether a service of this kind carries token terms (Service::tokens).
  bool HasTokenTerms() const {
    return traits().credit == CreditSource::kTokenModel;
  }

  friend bool operator==(ServiceKind a, ServiceKind b) {
    return a.index_ == b.index_;
  }
  friend std::strong_ordering operator<=>(ServiceKind a, ServiceKind b) {
    return a.index_ <=> b.index_;
  }

 private:
  friend std::optional<ServiceKind> ParseServiceKind(std::string_view name);
  friend StatusOr<ServiceKind> RegisterServiceKind(ServiceKindTraits traits);
  explicit ServiceKind(int index) : index_(index) {}

  int index_ = 0;
};

// The kind named `name`, or nullopt.
std::optional<ServiceKind> ParseServiceKind(std::string_view name);
// "dnn (the default) or llm", for messages.
std::string ServiceKindChoices();

// Adds a kind; InvalidArgument if its name is empty or taken, or if its
// engine's metrics give token figures its credit gives it no terms for;
// FailedPrecondition while a command runs (util/kind_registry.h).
StatusOr<ServiceKind> RegisterServiceKind(ServiceKindTraits traits);

}  // namespace migserve::workload

#endif  // MIGSERVE_WORKLOAD_SERVICE_KIND_H_
