#include "workload/workload_yaml.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <unordered_map>
#include <utility>

#include "boundary/input_file.h"
#include "boundary/plain_name.h"
#include "boundary/yaml_map.h"
#include "llm/request_lengths.h"
#include "mig/gpu_catalog.h"
#include "util/interrupt.h"

namespace migserve::workload {
namespace {

constexpr int kMaxRouterReplicas = 64;
// More replicas than this for one service is a typo.
constexpr int kMaxMinReplicas = 10000;
// Gaps far smoother or burstier than this are no renewal stream a service
// sees; the credit search's streams stay meaningful within it.
// Spare capacity beyond 10 x the required rate is a typo.
constexpr NumberRange kHeadroomRange{0, 10};
// What a service keeps after a loss: a share of its required rate.
constexpr NumberRange kKeepRange{1e-3, 1};
// The share of the SLO a batch may take: past 100 x the SLO, a typo.
constexpr NumberRange kLatencyBudgetRange{1e-3, 100};

// Quotes a YAML scalar unless it is plainly safe.
std::string Scalar(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s) {
    plain = plain && (isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                      c == '_' || c == '.' || c == '/');
  }
  if (plain && !isdigit(static_cast<unsigned char>(s[0]))) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// router, router_replicas and arrival_cv.
Status ParseTraffic(const YamlMap& map, Workload* w) {
  std::string router(queueing::RouterName(w->router));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("router", &router));
  auto kind = queueing::ParseRouter(router);
  if (!kind) {
    return map.Error("router", fmt::format("must be {}, got '{}'",
                                           queueing::RouterChoices(), router));
  }
  w->router = *kind;
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("router_replicas", &w->router_replicas));
  if (w->router_replicas < 1 || w->router_replicas > kMaxRouterReplicas) {
    return map.Error("router_replicas",
                     fmt::format("must be from 1 to {}, got {}",
                                 kMaxRouterReplicas, w->router_replicas));
  }
  return map.Optional("arrival_cv", &w->arrival_cv, kArrivalCvRange);
}

// survive: {domain: gpu | node, keep: F}.
Status ParseSurvive(const YamlMap& parent, Workload* w) {
  YAML::Node node = parent.Value("survive");
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map,
                            YamlMap::Open(node, parent.source(), "survive"));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys({"domain", "keep"}));
  Survive survive;
  std::string domain;
  MIGSERVE_RETURN_IF_ERROR(map.Required("domain", &domain));
  std::optional<FailureDomain> parsed = ParseFailureDomain(domain);
  if (!parsed) {
    return map.Error("domain",
                     fmt::format("must be gpu or node, got '{}'", domain));
  }
  survive.domain = *parsed;
  MIGSERVE_RETURN_IF_ERROR(map.Required("keep", &survive.keep, kKeepRange));
  w->survive = survive;
  return Status::Ok();
}

// The service's kind and the fields it reads into `s`
// (workload/service_kind.h): a kind with token terms reads
// llm::LlmTermFields, and its latency_ms defaults from them; a kind without
// has latency_ms and none of those.
Status ParseKindTerms(const YamlMap& map, Service* s) {
  std::string kind(ServiceKind().name());
  MIGSERVE_RETURN_IF_ERROR(map.Optional("kind", &kind));
  std::optional<ServiceKind> parsed = ParseServiceKind(kind);
  if (!parsed) {
    return map.Error("kind",
                     "must be " + ServiceKindChoices() + ", got " + kind);
  }
  s->kind = *parsed;
  if (!s->kind.HasTokenTerms()) {
    for (const llm::LlmTermField& field : llm::LlmTermFields()) {
      if (map.Value(field.key).IsDefined()) {
        return map.Error(field.key, "only a service of kind: llm has it");
      }
    }
    return map.Required("latency_ms", &s->latency_ms, kLatencyMsRange);
  }
  llm::LlmTerms t;
  for (const llm::LlmTermField& field : llm::LlmTermFields()) {
    MIGSERVE_RETURN_IF_ERROR(
        field.required
            ? map.Required(field.key, &(t.*field.member), field.range)
            : map.Optional(field.key, &(t.*field.member), field.range));
  }
  if (std::string problem = llm::MaxModelLenProblem(t); !problem.empty()) {
    return map.Error("max_model_len", problem);
  }
  s->latency_ms = llm::DefaultLatencyMs(t);
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("latency_ms", &s->latency_ms, kLatencyMsRange));
  t.latency_ms = s->latency_ms;
  s->tokens = t;
  return Status::Ok();
}

// `path` as the workload names it: relative to the workload's file.
std::string NextToWorkload(const Workload& w, std::string path) {
  if (path[0] != '/') {
    std::string dir = std::filesystem::path(w.source).parent_path();
    if (!dir.empty()) path = dir + "/" + path;
  }
  return path;
}

// Gives `w` the engine settings every LLM credit reads (`llm_margin`,
// `llm_chunked_prefill`) and the calibrations of its `llm_measurements`
// file, if it names one (after its LLM table).
Status ResolveLlmMeasurements(const YamlMap& map, Workload* w) {
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("llm_margin", &w->llm_margin, NumberRange{0, 1}));
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("llm_chunked_prefill", &w->llm_chunked_prefill));
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("llm_measurements", &w->llm_measurements_file));
  if (w->llm_measurements_file.empty()) return Status::Ok();
  if (!w->llm_models) w->llm_models = llm::SharedShippedLlmModels();
  auto calibrations =
      llm::Calibrations::Load(NextToWorkload(*w, w->llm_measurements_file),
                              *w->llm_models, mig::GpuCatalog::Default());
  if (!calibrations.ok()) {
    return map.Error("llm_measurements", calibrations.status().message());
  }
  w->llm_calibrations =
      std::make_shared<const llm::Calibrations>(std::move(*calibrations));
  return Status::Ok();
}

// Gives `w` the LLM table its LLM services name (`llm_models`, a path
// relative to the workload's file, else the shipped one) and checks that
// each of their models is in it.
Status ResolveLlmModels(const YamlMap& map, Workload* w) {
  MIGSERVE_RETURN_IF_ERROR(map.Optional("llm_models", &w->llm_models_file));
  bool any = false;
  for (const Service& s : w->services) any = any || s.kind.HasTokenTerms();
  if (!any && w->llm_models_file.empty()) return Status::Ok();
  if (w->llm_models_file.empty()) {
    w->llm_models = llm::SharedShippedLlmModels();
  } else {
    auto table = llm::LoadLlmModels(NextToWorkload(*w, w->llm_models_file));
    if (!table.ok()) return map.Error("llm_models", table.status().message());
    w->llm_models =
        std::make_shared<const llm::LlmModelTable>(std::move(*table));
  }
  for (size_t i = 0; i < w->services.size(); ++i) {
    Service& s = w->services[i];
    if (!s.kind.HasTokenTerms()) continue;
    auto model = w->llm_models->Find(s.model);
    if (!model.ok()) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: services[{}].model: {}", w->source, s.line, i,
                      model.status().message()));
    }
    s.llm_model = std::shared_ptr<const llm::LlmModel>(w->llm_models, *model);
  }
  return Status::Ok();
}

StatusOr<Service> ParseService(const YAML::Node& node,
                               const std::string& source, size_t index) {
  MIGSERVE_ASSIGN_OR_RETURN(
      YamlMap map,
      YamlMap::Open(node, source, fmt::format("services[{}]", index)));
  std::vector<std::string_view> keys = {
      "name",         "model",   "throughput", "latency_ms",
      "min_replicas", "observe", "kind"};
  for (const llm::LlmTermField& field : llm::LlmTermFields()) {
    keys.push_back(field.key);
  }
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys(keys));
  Service s;
  s.line = map.line();
  MIGSERVE_RETURN_IF_ERROR(map.Required("name", &s.name));
  MIGSERVE_RETURN_IF_ERROR(map.Required("model", &s.model));
  for (auto [key, name] : {std::pair{"name", &s.name}, {"model", &s.model}}) {
    if (std::string problem = PlainNameProblem(*name); !problem.empty()) {
      return map.Error(key, problem);
    }
  }
  MIGSERVE_RETURN_IF_ERROR(
      map.Required("throughput", &s.throughput, kRateRange));
  MIGSERVE_RETURN_IF_ERROR(ParseKindTerms(map, &s));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("min_replicas", &s.min_replicas));
  if (s.min_replicas < 1 || s.min_replicas > kMaxMinReplicas) {
    return map.Error("min_replicas",
                     fmt::format("must be from 1 to {}, got {}",
                                 kMaxMinReplicas, s.min_replicas));
  }
  if (node["observe"]) {
    MIGSERVE_ASSIGN_OR_RETURN(
        YamlMap observe,
        YamlMap::Open(node["observe"], source,
                      fmt::format("services[{}].observe", index)));
    MIGSERVE_RETURN_IF_ERROR(observe.CheckKeys({"rate", "p99_ms"}));
    for (auto [key, query] : {std::pair{"rate", &s.observe.rate},
                              std::pair{"p99_ms", &s.observe.p99_ms}}) {
      MIGSERVE_RETURN_IF_ERROR(observe.Optional(key, query));
      if (observe.Value(key).IsDefined() &&
          query->find_first_not_of(" \t") == std::string::npos) {
        return observe.Error(
            key, "an empty query; leave the key out for the default");
      }
    }
  }
  return s;
}

StatusOr<GpuOffer> ParseOffer(const YAML::Node& node, const std::string& source,
                              size_t index) {
  MIGSERVE_ASSIGN_OR_RETURN(
      YamlMap map, YamlMap::Open(node, source, fmt::format("gpus[{}]", index)));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys({"name", "cost"}));
  GpuOffer offer;
  MIGSERVE_RETURN_IF_ERROR(map.Required("name", &offer.name));
  auto gpu = mig::GpuCatalog::Default().Find(offer.name);
  if (!gpu.ok()) return map.Error("name", gpu.status().message());
  offer.name = (*gpu)->name;  // an alias is the GPU it names
  MIGSERVE_RETURN_IF_ERROR(map.Optional("cost", &offer.cost, kCostRange));
  return offer;
}

// A ServingWorkload manifest (deploy/base/crd.yaml): its spec, and which
// resource it is.
StatusOr<YAML::Node> ManifestSpec(const YAML::Node& root,
                                  const std::string& source,
                                  WorkloadResource* resource) {
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap manifest, YamlMap::Open(root, source, ""));
  MIGSERVE_RETURN_IF_ERROR(
      manifest.CheckKeys({"apiVersion", "kind", "metadata", "spec", "status"}));
  std::string kind, version;
  MIGSERVE_RETURN_IF_ERROR(manifest.Required("kind", &kind));
  MIGSERVE_RETURN_IF_ERROR(manifest.Required("apiVersion", &version));
  if (kind != "ServingWorkload" || version != "migserve.io/v1alpha1") {
    return manifest.Error(
        "kind", fmt::format("{} {}: a workload is a workload file or a "
                            "migserve.io/v1alpha1 ServingWorkload",
                            version, kind));
  }
  MIGSERVE_ASSIGN_OR_RETURN(
      YamlMap metadata, YamlMap::Open(root["metadata"], source, "metadata"));
  std::string name, namespace_;
  MIGSERVE_RETURN_IF_ERROR(metadata.Required("name", &name));
  MIGSERVE_RETURN_IF_ERROR(metadata.Optional("namespace", &namespace_));
  // As the API server takes them: a name a DNS subdomain, a namespace a
  // DNS label (a deployment's summary.workload carries both).
  if (!IsObjectName(name)) {
    return metadata.Error("name",
                          "not a Kubernetes object name (lower-case "
                          "letters, digits, '-' and '.')");
  }
  if (!namespace_.empty() &&
      (!IsObjectName(namespace_) || namespace_.size() > 63 ||
       namespace_.find('.') != std::string::npos)) {
    return metadata.Error("namespace",
                          "not a namespace name (lower-case "
                          "letters, digits and '-')");
  }
  double generation = 0;
  MIGSERVE_RETURN_IF_ERROR(metadata.Optional("generation", &generation));
  if (!(generation >= 0 && generation < 1e15) ||
      generation != std::floor(generation)) {
    return metadata.Error("generation", "not a whole number of at least 0");
  }
  if (!namespace_.empty()) resource->name = namespace_ + "/" + name;
  resource->generation = static_cast<long long>(generation);
  if (!root["spec"] || !root["spec"].IsMap()) {
    return manifest.Error("spec", "a ServingWorkload's spec is the workload");
  }
  return root["spec"];
}

// The workload in the document `root`: itself, or a ServingWorkload
// manifest's spec (line numbers stay the file's; `resource` then says
// which); InvalidArgument for an empty file or a deployment.
StatusOr<YAML::Node> WorkloadNode(const YAML::Node& root,
                                  const std::string& source,
                                  std::optional<WorkloadResource>* resource) {
  if (root.IsNull()) {
    return Status::InvalidArgument(
        source + ": empty file; expected a workload (gpu: and services:)");
  }
  YAML::Node node = root;
  if (root.IsMap() && root["kind"]) {
    resource->emplace();
    MIGSERVE_ASSIGN_OR_RETURN(node, ManifestSpec(root, source, &**resource));
  }
  if (node.IsMap() && node["summary"] && node["gpus"]) {
    return Status::InvalidArgument(
        source +
        ": this is a deployment (it has summary and gpus), not a workload");
  }
  return node;
}

}  // namespace

StatusOr<Workload> ParseWorkload(const std::string& text,
                                 const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node document, ParseYaml(text, source));
  std::optional<WorkloadResource> resource;
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node root,
                            WorkloadNode(document, source, &resource));
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(root, source, ""));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys(
      {"gpu", "gpus", "latency_budget", "capacity_model", "router",
       "router_replicas", "arrival_cv", "headroom", "survive", "max_procs",
       "legacy_4g3g", "optional_profiles", "llm_models", "llm_measurements",
       "llm_margin", "llm_chunked_prefill", "services"}));
  Workload w;
  w.source = source;
  w.resource = std::move(resource);
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> offers,
                            map.Sequence("gpus", false));
  for (size_t i = 0; i < offers.size(); ++i) {
    MIGSERVE_ASSIGN_OR_RETURN(GpuOffer o, ParseOffer(offers[i], source, i));
    for (const GpuOffer& before : w.offers) {
      if (before.name == o.name) {
        return map.Error("gpus", fmt::format("lists {} twice", o.name));
      }
    }
    w.offers.push_back(std::move(o));
  }
  if (w.offers.empty()) {
    MIGSERVE_RETURN_IF_ERROR(map.Required("gpu", &w.gpu));
    auto gpu = mig::GpuCatalog::Default().Find(w.gpu);
    if (!gpu.ok()) return map.Error("gpu", gpu.status().message());
    w.offers.push_back({w.gpu, 1});
  } else {
    MIGSERVE_RETURN_IF_ERROR(map.Optional("gpu", &w.gpu));
    if (!w.gpu.empty() && w.gpu != w.offers[0].name) {
      return map.Error("gpu", "must name the first of gpus (or be left out)");
    }
    w.gpu = w.offers[0].name;
  }
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("latency_budget", &w.latency_budget, kLatencyBudgetRange));
  std::string model(queueing::CapacityModelName(w.capacity_model));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("capacity_model", &model));
  auto parsed = queueing::ParseCapacityModel(model);
  if (!parsed) {
    return map.Error("capacity_model",
                     fmt::format("must be p99 or paper, got '{}'", model));
  }
  w.capacity_model = *parsed;
  MIGSERVE_RETURN_IF_ERROR(ParseTraffic(map, &w));
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("headroom", &w.headroom, kHeadroomRange));
  MIGSERVE_RETURN_IF_ERROR(ParseSurvive(map, &w));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("max_procs", &w.max_procs));
  if (w.max_procs < 1) {
    return map.Error("max_procs",
                     fmt::format("must be >= 1, got {}", w.max_procs));
  }
  MIGSERVE_RETURN_IF_ERROR(map.Optional("legacy_4g3g", &w.mig.legacy_4g3g));
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("optional_profiles", &w.mig.optional_profiles));
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> services,
                            map.Sequence("services", true));
  if (services.empty()) return map.Error("services", "lists no service");
  std::unordered_map<std::string, int> first_line;  // by name: a region's
                                                    // 200,000 services
  // By the name Kubernetes objects get (DnsLabel): the service that took it.
  std::unordered_map<std::string, size_t> by_label;
  for (size_t i = 0; i < services.size(); ++i) {
    if (Interrupted()) {
      return Status::Aborted(source + ": interrupted while reading it");
    }
    MIGSERVE_ASSIGN_OR_RETURN(Service s, ParseService(services[i], source, i));
    auto [previous, added] = first_line.emplace(s.name, s.line);
    if (!added) {
      return Status::InvalidArgument(fmt::format(
          "{}:{}: services[{}].name: duplicate service '{}' (first at line "
          "{})",
          source, s.line, i, s.name, previous->second));
    }
    auto [same, fresh] = by_label.emplace(DnsLabel(s.name), i);
    if (!fresh) {
      const Service& other = w.services[same->second];
      return Status::InvalidArgument(fmt::format(
          "{}:{}: services[{}].name: services '{}' (line {}) and '{}' both "
          "become '{}' in Kubernetes object names; rename one",
          source, s.line, i, other.name, other.line, s.name, same->first));
    }
    w.services.push_back(std::move(s));
  }
  MIGSERVE_RETURN_IF_ERROR(ResolveLlmModels(map, &w));
  MIGSERVE_RETURN_IF_ERROR(ResolveLlmMeasurements(map, &w));
  return w;
}

StatusOr<Workload> LoadWorkload(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseWorkload(text, path);
}

std::string FormatWorkload(const Workload& w) {
  std::string out = fmt::format("gpu: {}\n", Scalar(w.gpu));
  if (w.offers.size() > 1 || (w.offers.size() == 1 && w.offers[0].cost != 1)) {
    out += "gpus:\n";
    for (const GpuOffer& o : w.offers) {
      out +=
          fmt::format("  - {{name: {}, cost: {}}}\n", Scalar(o.name), o.cost);
    }
  }
  out += fmt::format("latency_budget: {}\n", w.latency_budget);
  if (w.capacity_model != queueing::CapacityModel::kP99) {
    out += fmt::format("capacity_model: {}\n",
                       queueing::CapacityModelName(w.capacity_model));
  }
  if (w.router != Workload{}.router) {
    out += fmt::format("router: {}\n", queueing::RouterName(w.router));
  }
  if (w.router_replicas != Workload{}.router_replicas) {
    out += fmt::format("router_replicas: {}\n", w.router_replicas);
  }
  if (w.arrival_cv != 1) out += fmt::format("arrival_cv: {}\n", w.arrival_cv);
  if (w.headroom != 0) out += fmt::format("headroom: {}\n", w.headroom);
  if (w.llm_margin != Workload{}.llm_margin) {
    out += fmt::format("llm_margin: {}\n", w.llm_margin);
  }
  if (!w.llm_chunked_prefill) out += "llm_chunked_prefill: false\n";
  if (w.survive) {
    out += fmt::format("survive: {{domain: {}, keep: {}}}\n",
                       FailureDomainName(w.survive->domain), w.survive->keep);
  }
  out += fmt::format("max_procs: {}\n", w.max_procs);
  if (w.mig.legacy_4g3g) out += "legacy_4g3g: true\n";
  if (w.mig.optional_profiles) out += "optional_profiles: true\n";
  if (!w.llm_models_file.empty()) {
    out += fmt::format("llm_models: {}\n", Scalar(w.llm_models_file));
  }
  if (!w.llm_measurements_file.empty()) {
    out +=
        fmt::format("llm_measurements: {}\n", Scalar(w.llm_measurements_file));
  }
  out += "services:\n";
  for (const Service& s : w.services) {
    std::string min_replicas =
        s.min_replicas != 1 ? fmt::format(", min_replicas: {}", s.min_replicas)
                            : "";
    std::string observe;
    if (!s.observe.rate.empty()) {
      observe += "rate: " + Scalar(s.observe.rate);
    }
    if (!s.observe.p99_ms.empty()) {
      observe += (observe.empty() ? "" : ", ") +
                 ("p99_ms: " + Scalar(s.observe.p99_ms));
    }
    if (!observe.empty()) observe = ", observe: {" + observe + "}";
    std::string llm;
    if (s.kind != ServiceKind()) llm = fmt::format(", kind: {}", s.kind.name());
    if (s.tokens) {
      for (const llm::LlmTermField& field : llm::LlmTermFields()) {
        double value = (*s.tokens).*field.member;
        if (value == 0 && !field.written_at_zero) continue;
        llm += fmt::format(", {}: {}", field.key, value);
      }
    }
    out += fmt::format(
        "  - {{name: {}, model: {}, throughput: {}, latency_ms: {}{}{}{}}}\n",
        Scalar(s.name), Scalar(s.model), s.throughput.value(), s.latency_ms,
        llm, min_replicas, observe);
  }
  return out;
}

}  // namespace migserve::workload
