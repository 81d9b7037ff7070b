#include "kubernetes/serving_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "boundary/input_file.h"
#include "boundary/plain_name.h"
#include "boundary/yaml_map.h"
#include "kube/yaml_json.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "llm/llm_model.h"

namespace migserve::kubernetes {
namespace {

using OrderedJson = nlohmann::ordered_json;

bool Reserved(const std::string& key) {
  return key.rfind("migserve.io/", 0) == 0 || key == kManagedBy;
}

// Reads the list under `key`: each item a mapping with every field of
// `required` a string, or (if `required` is empty) anything.
Status ReadList(const YamlMap& map, const char* key,
                const std::vector<const char*>& required, OrderedJson* out) {
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> items,
                            map.Sequence(key, false));
  OrderedJson list = OrderedJson::array();
  for (size_t i = 0; i < items.size(); ++i) {
    std::string path = fmt::format("{}[{}]", map.FieldPath(key), i);
    MIGSERVE_ASSIGN_OR_RETURN(YamlMap item,
                              YamlMap::Open(items[i], map.source(), path));
    for (const char* field : required) {
      std::string value;
      MIGSERVE_RETURN_IF_ERROR(item.Required(field, &value));
      if (value.empty()) return item.Error(field, "must not be empty");
    }
    list.push_back(kube::YamlToJson(items[i]));
  }
  (*out)[key] = std::move(list);
  return Status::Ok();
}

// Reads the mapping under `key` as JSON.
Status ReadObject(const YamlMap& map, const char* key, OrderedJson* out) {
  MIGSERVE_RETURN_IF_ERROR(
      YamlMap::Open(map.Value(key), map.source(), map.FieldPath(key)).status());
  (*out)[key] = kube::YamlToJson(map.Value(key));
  return Status::Ok();
}

// Reads a mapping of strings to strings (labels, annotations, a node
// selector); `check` says what is wrong with an entry, or "".
Status ReadStrings(const YamlMap& map, const char* key,
                   const std::function<std::string(const std::string&,
                                                   const std::string&)>& check,
                   OrderedJson* out) {
  MIGSERVE_ASSIGN_OR_RETURN(
      YamlMap value,
      YamlMap::Open(map.Value(key), map.source(), map.FieldPath(key)));
  OrderedJson strings = OrderedJson::object();
  for (const auto& entry : map.Value(key)) {
    std::string name = entry.first.as<std::string>("");
    if (!entry.second.IsScalar()) {
      return value.Error(name, "expected a string");
    }
    std::string why = check(name, entry.second.Scalar());
    if (!why.empty()) return value.Error(name, why);
    strings[name] = entry.second.Scalar();
  }
  (*out)[key] = std::move(strings);
  return Status::Ok();
}

// Reads a pod template (the default one or a service's overrides) from
// `map` into `out`, field by field.
// The template's env: no variable of the replica contract (MIGSERVE_*).
Status ReadEnv(const YamlMap& map, OrderedJson* out) {
  MIGSERVE_RETURN_IF_ERROR(ReadList(map, "env", {"name"}, out));
  for (size_t i = 0; i < (*out)["env"].size(); ++i) {
    std::string name = (*out)["env"][i]["name"];
    if (name.rfind("MIGSERVE_", 0) == 0) {
      return map.Error("env", fmt::format("env[{}]: {} is set by migserve "
                                          "(the replica contract)",
                                          i, name));
    }
  }
  return Status::Ok();
}

// The template's ports: at least one, each a containerPort of 1 to 65535.
Status ReadPorts(const YamlMap& map, OrderedJson* out) {
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> ports,
                            map.Sequence("ports", true));
  if (ports.empty()) return map.Error("ports", "needs at least one port");
  for (size_t i = 0; i < ports.size(); ++i) {
    MIGSERVE_ASSIGN_OR_RETURN(
        YamlMap port,
        YamlMap::Open(ports[i], map.source(),
                      fmt::format("{}[{}]", map.FieldPath("ports"), i)));
    int number = 0;
    MIGSERVE_RETURN_IF_ERROR(port.Required("containerPort", &number));
    if (number < 1 || number > 65535) {
      return port.Error("containerPort", "must be 1 to 65535");
    }
  }
  return ReadList(map, "ports", {}, out);
}

// The template's resources: limits and requests, none of nvidia.com/ (the
// replica's MIG device is migserve's to request).
Status CheckResources(const YamlMap& map, const OrderedJson& template_json) {
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap resources,
                            YamlMap::Open(map.Value("resources"), map.source(),
                                          map.FieldPath("resources")));
  MIGSERVE_RETURN_IF_ERROR(resources.CheckKeys({"limits", "requests"}));
  auto declared = template_json.find("resources");
  if (declared == template_json.end() || !declared->is_object()) {
    return Status::Ok();
  }
  for (const char* side : {"limits", "requests"}) {
    auto amounts = declared->find(side);
    if (amounts == declared->end() || !amounts->is_object()) continue;
    for (const auto& [name, value] : amounts->items()) {
      if (name.rfind("nvidia.com/", 0) == 0) {
        return resources.Error(
            side, name +
                      ": migserve requests the replica's MIG device "
                      "itself; leave nvidia.com/ resources out");
      }
    }
  }
  return Status::Ok();
}

// The template's labels, annotations and node selector: string maps that
// leave migserve's own keys alone.
Status ReadStringMaps(const YamlMap& map, OrderedJson* out) {
  auto label = [](const std::string& key, const std::string& value) {
    if (Reserved(key)) return key + " is set by migserve";
    Status ok = CheckLabelValue(value, "value");
    return ok.ok() ? std::string() : ok.message();
  };
  auto annotation = [](const std::string& key, const std::string&) {
    return Reserved(key) ? key + " is set by migserve" : std::string();
  };
  auto selector = [](const std::string& key, const std::string&) {
    return key == "kubernetes.io/hostname"
               ? std::string("migserve pins each replica to its node itself")
               : std::string();
  };
  using Check = std::string (*)(const std::string&, const std::string&);
  for (auto [key, check] : {std::pair<const char*, Check>{"labels", +label},
                            {"annotations", +annotation},
                            {"nodeSelector", +selector}}) {
    if (map.Value(key).IsDefined()) {
      MIGSERVE_RETURN_IF_ERROR(ReadStrings(map, key, check, out));
    }
  }
  return Status::Ok();
}

Status ReadTemplate(const YamlMap& map, OrderedJson* out) {
  MIGSERVE_RETURN_IF_ERROR(
      map.CheckKeys({"image", "imagePullPolicy", "command", "args", "env",
                     "ports", "readinessProbe", "livenessProbe", "startupProbe",
                     "resources", "volumeMounts", "volumes", "tolerations",
                     "imagePullSecrets", "serviceAccountName", "nodeSelector",
                     "labels", "annotations", "securityContext"}));
  for (const char* key : {"image", "imagePullPolicy", "serviceAccountName"}) {
    if (!map.Value(key).IsDefined()) continue;
    std::string value;
    MIGSERVE_RETURN_IF_ERROR(map.Required(key, &value));
    if (value.empty()) return map.Error(key, "must not be empty");
    if (std::string problem = WordProblem(value); !problem.empty()) {
      return map.Error(key, problem);
    }
    (*out)[key] = value;
  }
  for (const char* key : {"command", "args"}) {
    if (!map.Value(key).IsDefined()) continue;
    std::vector<std::string> words;
    MIGSERVE_RETURN_IF_ERROR(map.Optional(key, &words));
    // vLLM's --served-model-name=X serves X alone, while the proxy routes
    // a service's model and the model's aliases to it too: each of those
    // requests would get vLLM's 404.
    for (const std::string& word : words) {
      if (word.rfind("--served-model-name=", 0) == 0) {
        return map.Error(
            key, fmt::format("'{}' serves one name, but the proxy routes the "
                             "service's name, its model and the model's "
                             "aliases to it: write --served-model-name and "
                             "$(MIGSERVE_SERVED_MODEL_NAMES) as two words",
                             Printable(word)));
      }
    }
    (*out)[key] = words;
  }
  if (map.Value("env").IsDefined()) {
    MIGSERVE_RETURN_IF_ERROR(ReadEnv(map, out));
  }
  if (map.Value("ports").IsDefined()) {
    MIGSERVE_RETURN_IF_ERROR(ReadPorts(map, out));
  }
  for (const char* key : {"readinessProbe", "livenessProbe", "startupProbe",
                          "resources", "securityContext"}) {
    if (map.Value(key).IsDefined()) {
      MIGSERVE_RETURN_IF_ERROR(ReadObject(map, key, out));
    }
  }
  if (map.Value("resources").IsDefined()) {
    MIGSERVE_RETURN_IF_ERROR(CheckResources(map, *out));
  }
  const std::pair<const char*, std::vector<const char*>> lists[] = {
      {"volumeMounts", {"name", "mountPath"}},
      {"volumes", {"name"}},
      {"imagePullSecrets", {"name"}},
      {"tolerations", {}}};
  for (const auto& [key, required] : lists) {
    if (map.Value(key).IsDefined()) {
      MIGSERVE_RETURN_IF_ERROR(ReadList(map, key, required, out));
    }
  }
  return ReadStringMaps(map, out);
}

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
    MIGSERVE_RETURN_IF_ERROR(ReadTemplate(pod, &spec.pod));
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
      MIGSERVE_RETURN_IF_ERROR(ReadTemplate(pod, &fields));
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
      MIGSERVE_RETURN_IF_ERROR(ReadTemplate(overrides, &fields));
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
