// The serving spec (docs/serving.md): how replicas run and how requests reach
// them. A YAML file with the namespace, the gateway that routes requests
// (Gateway API), the default pod template of a replica (image, command, args,
// env, ports, probes, resources, volumes, tolerations, labels, annotations)
// and per-service overrides. `export --serving` and `controller --serving`
// read it; every replica gets the replica contract (ReplicaContract in
// replica_pod.h) on top of its template.
#ifndef MIGSERVE_KUBERNETES_SERVING_SPEC_H_
#define MIGSERVE_KUBERNETES_SERVING_SPEC_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kubernetes/cluster_model.h"
#include "util/status_or.h"
#include "workload/service_kind.h"
#include "workload/workload.h"

namespace migserve::kubernetes {

// The Gateway an HTTPRoute attaches to (its parentRefs entry).
struct GatewayRef {
  std::string name;
  std::string namespace_;    // empty: the route's namespace
  std::string section_name;  // empty: every listener
};

// How a service's HTTPRoute picks its requests.
enum class RouteMatch {
  kPath,    // path prefix /v2/models/<model> (KServe v2 / Triton HTTP API)
  kHeader,  // header migserve-service: <service>
};

inline constexpr char kServiceHeader[] = "migserve-service";
// The header the Gateway API Inference Extension's body-based routing
// (an ext_proc beside the gateway) sets to an OpenAI request's body
// `model`, for HTTPRoutes to match on.
inline constexpr char kModelHeader[] = "X-Gateway-Model-Name";

// The container port named `name` in `containers` (a pod's containers, or
// a template's one in an array), else the first port listed when
// `or_first`; 0 when there is none. Entries that are not ports are passed
// over.
template <typename JsonT>
int ContainerPortOf(const JsonT& containers, const std::string& name,
                    bool or_first) {
  int first = 0;
  if (!containers.is_array()) return 0;
  for (const JsonT& c : containers) {
    if (!c.is_object() || !c.contains("ports") || !c["ports"].is_array()) {
      continue;
    }
    for (const JsonT& p : c["ports"]) {
      if (!p.is_object() || !p.contains("containerPort") ||
          !p["containerPort"].is_number_integer()) {
        continue;
      }
      // A TCP port or none: 99999999 would make nginx refuse every later
      // configuration.
      long long value = p["containerPort"].template get<long long>();
      if (value < 1 || value > 65535) continue;
      int port = static_cast<int>(value);
      if (p.value("name", "") == name) return port;
      if (first == 0) first = port;
    }
  }
  return or_first ? first : 0;
}

// The route-port rule, the one `export`, the controller and the proxy
// follow: a replica takes routed HTTP requests on its container port named
// "http", else on the first port listed.
template <typename JsonT>
int RoutePortOf(const JsonT& containers) {
  return ContainerPortOf(containers, "http", true);
}

// Where the proxy sends a replica's gRPC requests (KServe v2 / Triton gRPC
// API): its container port named "grpc"; 0 (no gRPC) without one.
template <typename JsonT>
int GrpcPortOf(const JsonT& containers) {
  return ContainerPortOf(containers, "grpc", false);
}

// The default template's image (NVIDIA's Triton Inference Server).
inline constexpr char kTritonImage[] = "nvcr.io/nvidia/tritonserver:24.08-py3";
// The default LLM template's image (vLLM's OpenAI-compatible server).
inline constexpr char kVllmImage[] = "vllm/vllm-openai:v0.10.1";

// A template's command or args word that export replaces with the names a
// language model's replica answers to, one word each (ServingSpec::
// ServedNames): vLLM's --served-model-name takes several words, and a
// Kubernetes $(VAR) expands to one. The variable of that name holds them
// too, separated by spaces, for a shell.
inline constexpr char kServedNamesWord[] = "$(MIGSERVE_SERVED_MODEL_NAMES)";

struct ServingSpec {
  std::string source = "built-in defaults";  // where it came from
  std::string namespace_;                    // empty: the kubeconfig's
  std::optional<GatewayRef> gateway;         // none: no routes
  RouteMatch match = RouteMatch::kPath;
  std::vector<std::string> hostnames;
  // The pod template (fields as in the YAML; see docs/serving.md) and the
  // fields each service replaces.
  nlohmann::ordered_json pod = DefaultTemplate();
  // The template of the replicas of each kind `templates:` names (by the
  // kind's name): its engine's built-in template with the fields given
  // there. A kind not listed runs `pod` where the spec gives a `template:`
  // (one template for all), else its engine's built-in template.
  std::map<workload::ServiceKind, nlohmann::ordered_json> kind_pods;
  std::map<std::string, nlohmann::ordered_json> services;
  // The proxy's image (`proxy: {image: ...}`), as the install pins the
  // controller's; empty: export's --proxy-image, else migserve:<version>.
  std::string proxy_image;
  std::map<std::string, int> service_lines;  // where each override is
  // The kind of each service served (workload/service_kind.h), from the
  // deployment export writes or the controller moves to (KindsFrom), not
  // from the file: its engine picks the template and the API the proxy
  // speaks to it. A service not listed is of the default kind.
  std::map<std::string, workload::ServiceKind> kinds;
  // The token terms of each of those services whose kind has them (the
  // engine settings of its replicas follow from them).
  std::map<std::string, llm::LlmTerms> tokens;
  // Their models' entries, in the table their credits were searched with
  // (workload::Service::llm_model): the engine settings and the names
  // their replicas are given come from these, not the shipped table.
  std::map<std::string, std::shared_ptr<const llm::LlmModel>> llm_models;

  // Takes the kinds, token terms and model entries of `services`.
  void KindsFrom(const std::vector<workload::Service>& services);
  // The engine `service`'s kind runs on.
  workload::Engine EngineOf(const std::string& service) const;
  // Whether `service`'s replicas speak the OpenAI API (its engine is vLLM):
  // the proxy routes it by the body's model, its HTTPRoute matches /v1.
  bool SpeaksOpenAi(const std::string& service) const;
  // Whether the proxy keeps `service`'s conversations on its replicas
  // (proxy::ProxyUpstream::affinity): it speaks the OpenAI API and its
  // credits count prefix-cache hits (a prefix_cache_hit_rate above 0),
  // which only a conversation's own replica finds.
  bool KeepsConversations(const std::string& service) const;
  // `service`'s model's entry (llm_models), or null.
  const llm::LlmModel* LlmModelOf(const std::string& service) const;
  // The names `service`'s replicas, running `model`, answer to where they
  // speak the OpenAI API (llm::ServedNames with its model's entry, whose
  // engine settings they take too): what the proxy routes to them and
  // $(MIGSERVE_SERVED_MODEL_NAMES) gives vLLM. None otherwise.
  std::vector<std::string> ServedNames(const std::string& service,
                                       const std::string& model) const;

  // The default template: NVIDIA's Triton image, ports http 8000, grpc
  // 8001 and metrics 8002, ready on /v2/health/ready, live on /v2/health/live,
  // 1 CPU and 4 GiB requested.
  static nlohmann::ordered_json DefaultTemplate();
  // The built-in LLM template: vLLM's OpenAI-compatible server (docs/llm.md,
  // "Serving") on the model at /models/$(MIGSERVE_MODEL), served under the
  // service's name with the engine settings the credit assumed
  // ($(MIGSERVE_BATCH) sequences, 90% of the slice, $(MIGSERVE_MAX_MODEL_LEN),
  // $(MIGSERVE_KV_CACHE_DTYPE)), port http 8000, ready on /health.
  static nlohmann::ordered_json VllmTemplate();
  // The built-in template of `engine`'s replicas: one of the two above.
  static nlohmann::ordered_json EngineTemplate(workload::Engine engine);

  // The template of a replica of `service`: its kind's (kind_pods, else
  // `pod` or its engine's built-in one), with `service`'s overrides; where that
  // leaves Triton's image with neither command nor args, the default server
  // command (Triton on the model repository /models, loading only the replica's
  // model,
  // $(MIGSERVE_MODEL)).
  nlohmann::ordered_json TemplateFor(const std::string& service) const;
  // The container port `service`'s requests go to (RoutePortOf over the
  // template's ports); 8000 when the template lists none.
  int RoutePort(const std::string& service) const;
  // "SOURCE:LINE: services.NAME: no service NAME in WHAT (it has: ...)"
  // for each override of a service not in `known`: said, since a mistyped
  // name leaves its service on the default, but no error, since one spec
  // may serve several deployments (issue 90: the Triton example refused
  // every deployment without bert-1).
  std::vector<std::string> UnusedOverrides(
      const std::vector<std::string>& known, const std::string& what) const;
};

// Parses a serving spec; errors name `source`, the line and the field.
StatusOr<ServingSpec> ParseServingSpec(const std::string& yaml,
                                       const std::string& source);
StatusOr<ServingSpec> LoadServingSpec(const std::string& path);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_SERVING_SPEC_H_
