#include "kubernetes/serving_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "boundary/input_file.h"
#include "boundary/plain_name.h"
#include "boundary/yaml_map.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/pod_template.h"
#include "llm/llm_model.h"

namespace migserve::kubernetes {
namespace {

using OrderedJson = nlohmann::ordered_json;

Status ReadRouting(const YamlMap& map, ServingSpec* spec) {
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys({"gateway", "match", "hostnames"}));
  if (map.Value("gateway").IsDefined()) {
    MIGSERVE_ASSIGN_OR_RETURN(YamlMap gateway,
                              YamlMap::Open(map.Value("gateway"), map.source(),
                                            map.FieldPath("gateway")));
    MIGSERVE_RETURN_IF_ERROR(
        gateway.CheckKeys({"name", "namespace", "sectionName"}));
    GatewayRef ref;
    MIGSERVE_RETURN_IF_ERROR(gateway.Required("name", &ref.name));
    MIGSERVE_RETURN_IF_ERROR(gateway.Optional("namespace", &ref.namespace_));
    MIGSERVE_RETURN_IF_ERROR(
        gateway.Optional("sectionName", &ref.section_name));
    std::string problem = ObjectNameProblem(ref.name);
    if (!problem.empty()) return gateway.Error("name", problem);
    problem = ref.namespace_.empty() ? "" : ObjectNameProblem(ref.namespace_);
    if (!problem.empty()) return gateway.Error("namespace", problem);
    spec->gateway = ref;
  }
  std::string match = "path";
  MIGSERVE_RETURN_IF_ERROR(map.Optional("match", &match));
  if (match == "path") {
    spec->match = RouteMatch::kPath;
  } else if (match == "header") {
    spec->match = RouteMatch::kHeader;
  } else {
    return map.Error("match", "expected path or header, got " + match);
  }
  return map.Optional("hostnames", &spec->hostnames);
}

}  // namespace

OrderedJson ServingSpec::DefaultTemplate() {
  return {{"image", kTritonImage},
          {"ports", OrderedJson::array(
                        {{{"name", "http"}, {"containerPort", 8000}},
                         {{"name", "grpc"}, {"containerPort", 8001}},
                         {{"name", "metrics"}, {"containerPort", 8002}}})},
          {"readinessProbe",
           {{"httpGet", {{"path", "/v2/health/ready"}, {"port", "http"}}}}},
          {"livenessProbe",
           {{"httpGet", {{"path", "/v2/health/live"}, {"port", "http"}}},
            {"periodSeconds", 10},
            {"failureThreshold", 6}}},
          {"resources", {{"requests", {{"cpu", "1"}, {"memory", "4Gi"}}}}},
          // Pod Security "restricted": the Triton image's own unprivileged
          // user (triton-server, uid 1000), the runtime's seccomp profile.
          {"securityContext",
           {{"runAsNonRoot", true},
            {"runAsUser", 1000},
            {"runAsGroup", 1000},
            {"seccompProfile", {{"type", "RuntimeDefault"}}}}}};
}

OrderedJson ServingSpec::VllmTemplate() {
  return {
      {"image", kVllmImage},
      {"command", {"vllm", "serve"}},
      {"args",
       {"/models/$(MIGSERVE_MODEL)", "--served-model-name", kServedNamesWord,
        "--max-num-seqs=$(MIGSERVE_BATCH)", "--gpu-memory-utilization=0.9",
        "--max-model-len=$(MIGSERVE_MAX_MODEL_LEN)",
        "--kv-cache-dtype=$(MIGSERVE_KV_CACHE_DTYPE)", "--port=8000"}},
      {"env", OrderedJson::array({{{"name", "HOME"}, {"value", "/tmp"}}})},
      {"ports",
       OrderedJson::array({{{"name", "http"}, {"containerPort", 8000}}})},
      // Loading the weights takes minutes: started within 10.
      {"startupProbe",
       {{"httpGet", {{"path", "/health"}, {"port", "http"}}},
        {"periodSeconds", 5},
        {"failureThreshold", 120}}},
      {"readinessProbe",
       {{"httpGet", {{"path", "/health"}, {"port", "http"}}},
        {"periodSeconds", 2}}},
      {"livenessProbe",
       {{"httpGet", {{"path", "/health"}, {"port", "http"}}},
        {"periodSeconds", 10},
        {"failureThreshold", 6}}},
      {"resources", {{"requests", {{"cpu", "4"}, {"memory", "24Gi"}}}}},
      // Pod Security "restricted": an unprivileged user (HOME in /tmp for
      // the engine's caches), the runtime's seccomp profile.
      {"securityContext",
       {{"runAsNonRoot", true},
        {"runAsUser", 1000},
        {"runAsGroup", 1000},
        {"seccompProfile", {{"type", "RuntimeDefault"}}}}}};
}

void ServingSpec::KindsFrom(const std::vector<workload::Service>& served) {
  for (const workload::Service& s : served) {
    kinds[s.name] = s.kind;
    if (s.tokens) tokens[s.name] = *s.tokens;
    if (s.llm_model) llm_models[s.name] = s.llm_model;
  }
}

const llm::LlmModel* ServingSpec::LlmModelOf(const std::string& service) const {
  auto it = llm_models.find(service);
  return it != llm_models.end() ? it->second.get() : nullptr;
}

workload::Engine ServingSpec::EngineOf(const std::string& service) const {
  auto it = kinds.find(service);
  return (it != kinds.end() ? it->second : workload::ServiceKind())
      .traits()
      .engine;
}

std::vector<std::string> ServingSpec::ServedNames(
    const std::string& service, const std::string& model) const {
  if (!SpeaksOpenAi(service)) return {};
  return llm::ServedNames(service, model, LlmModelOf(service));
}

bool ServingSpec::KeepsConversations(const std::string& service) const {
  auto terms = tokens.find(service);
  return SpeaksOpenAi(service) && terms != tokens.end() &&
         terms->second.prefix_cache_hit_rate > 0;
}

bool ServingSpec::SpeaksOpenAi(const std::string& service) const {
  switch (EngineOf(service)) {
    case workload::Engine::kTriton:
      return false;
    case workload::Engine::kVllm:
      return true;
  }
  return false;
}

OrderedJson ServingSpec::EngineTemplate(workload::Engine engine) {
  switch (engine) {
    case workload::Engine::kTriton:
      return DefaultTemplate();
    case workload::Engine::kVllm:
      return VllmTemplate();
  }
  return DefaultTemplate();
}

OrderedJson ServingSpec::TemplateFor(const std::string& service) const {
  auto kind = kinds.find(service);
  workload::ServiceKind of =
      kind != kinds.end() ? kind->second : workload::ServiceKind();
  auto own = kind_pods.find(of);
  OrderedJson merged = own != kind_pods.end() ? own->second
                       : pod != DefaultTemplate()
                           ? pod
                           : EngineTemplate(of.traits().engine);
  auto it = services.find(service);
  if (it != services.end()) {
    for (const auto& [key, value] : it->second.items()) merged[key] = value;
  }
  // The Triton image without a command would run no model (its
  // entrypoint starts a shell): Triton serves the replica's model from
  // the repository at /models. Another image runs its own entrypoint.
  // It listens on the template's own ports (--port replaces them).
  if (merged.value("image", "") == kTritonImage &&
      !merged.contains("command") && !merged.contains("args")) {
    OrderedJson container = OrderedJson::array({merged});
    OrderedJson args = {"--model-repository=/models",
                        "--model-control-mode=explicit",
                        "--load-model=$(MIGSERVE_MODEL)"};
    for (const auto& [flag, port] :
         {std::pair{"http", RoutePortOf(container)},
          std::pair{"grpc", GrpcPortOf(container)},
          std::pair{"metrics", ContainerPortOf(container, "metrics", false)}}) {
      if (port > 0) args.push_back(fmt::format("--{}-port={}", flag, port));
    }
    // The p99 `migserve autoscale` reads.
    args.push_back("--metrics-config=summary_latencies=true");
    merged["command"] = OrderedJson::array({"tritonserver"});
    merged["args"] = std::move(args);
  }
  return merged;
}

int ServingSpec::RoutePort(const std::string& service) const {
  int port = RoutePortOf(OrderedJson::array({TemplateFor(service)}));
  return port > 0 ? port : 8000;
}

StatusOr<ServingSpec> ParseServingSpec(const std::string& yaml,
                                       const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(yaml, source));
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(root, source, ""));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys(
      {"namespace", "routing", "proxy", "template", "templates", "services"}));
  ServingSpec spec;
  spec.source = source;
  MIGSERVE_RETURN_IF_ERROR(map.Optional("namespace", &spec.namespace_));
  if (!spec.namespace_.empty() &&
      DnsLabel(spec.namespace_) != spec.namespace_) {
    return map.Error("namespace", spec.namespace_ + " is not a DNS label");
  }
  if (map.Value("routing").IsDefined()) {
    MIGSERVE_ASSIGN_OR_RETURN(
        YamlMap routing,
        YamlMap::Open(map.Value("routing"), source, "routing"));
    MIGSERVE_RETURN_IF_ERROR(ReadRouting(routing, &spec));
  }
  if (map.Value("proxy").IsDefined()) {
    MIGSERVE_ASSIGN_OR_RETURN(
        YamlMap proxy, YamlMap::Open(map.Value("proxy"), source, "proxy"));
    MIGSERVE_RETURN_IF_ERROR(proxy.CheckKeys({"image"}));
    MIGSERVE_RETURN_IF_ERROR(proxy.Required("image", &spec.proxy_image));
    if (std::string problem = WordProblem(spec.proxy_image);
        spec.proxy_image.empty() || !problem.empty()) {
      return proxy.Error("image",
                         problem.empty() ? "must not be empty" : problem);
    }
  }
  if (map.Value("template").IsDefined()) {
    MIGSERVE_ASSIGN_OR_RETURN(
        YamlMap pod, YamlMap::Open(map.Value("template"), source, "template"));
    MIGSERVE_RETURN_IF_ERROR(ReadPodTemplate(pod, &spec.pod));
  }
  if (map.Value("templates").IsDefined()) {
    MIGSERVE_ASSIGN_OR_RETURN(
        YamlMap templates,
        YamlMap::Open(map.Value("templates"), source, "templates"));
    for (const auto& entry : map.Value("templates")) {
      std::string name = entry.first.as<std::string>("");
      std::optional<workload::ServiceKind> kind =
          workload::ParseServiceKind(name);
      if (!kind) {
        return templates.Error(
            name, fmt::format("no service kind {} (the kinds: {})", name,
                              workload::ServiceKindChoices()));
      }
      MIGSERVE_ASSIGN_OR_RETURN(
          YamlMap pod,
          YamlMap::Open(entry.second, source, templates.FieldPath(name)));
      // Its fields replace the kind's engine's built-in template's.
      OrderedJson fields = ServingSpec::EngineTemplate(kind->traits().engine);
      MIGSERVE_RETURN_IF_ERROR(ReadPodTemplate(pod, &fields));
      spec.kind_pods[*kind] = std::move(fields);
    }
  }
  if (map.Value("services").IsDefined()) {
    MIGSERVE_ASSIGN_OR_RETURN(
        YamlMap services,
        YamlMap::Open(map.Value("services"), source, "services"));
    for (const auto& entry : map.Value("services")) {
      std::string name = entry.first.as<std::string>("");
      MIGSERVE_ASSIGN_OR_RETURN(
          YamlMap overrides,
          YamlMap::Open(entry.second, source, services.FieldPath(name)));
      OrderedJson fields = OrderedJson::object();
      MIGSERVE_RETURN_IF_ERROR(ReadPodTemplate(overrides, &fields));
      spec.services[name] = std::move(fields);
      spec.service_lines[name] = entry.first.Mark().line + 1;
    }
  }
  return spec;
}

std::vector<std::string> ServingSpec::UnusedOverrides(
    const std::vector<std::string>& known, const std::string& what) const {
  std::vector<std::string> unused;
  for (const auto& [name, line] : service_lines) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    unused.push_back(
        fmt::format("{}:{}: services.{}: no service {} in {} (it has: {})",
                    source, line, name, name, what, fmt::join(known, ", ")));
  }
  return unused;
}

StatusOr<ServingSpec> LoadServingSpec(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseServingSpec(text, path);
}

}  // namespace migserve::kubernetes
