#include "deployment/deployment_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "boundary/input_file.h"
#include "boundary/json_fields.h"
#include "boundary/number.h"
#include "boundary/plain_name.h"
#include "deployment/validator.h"
#include "llm/llm_model.h"
#include "llm/request_lengths.h"

namespace migserve::deployment {
namespace {

using nlohmann::json;

// Bounds on a replica's row: a batch and its server processes, its credit
// (0 for a replica credited nothing) and its batch time (0: not given).
constexpr int kMaxBatch = 1 << 20;
constexpr int kMaxProcs = 1024;
constexpr NumberRange kCreditRange{0, kRateRange.max};
constexpr NumberRange kBatchTimeRange{0, kLatencyMsRange.max};

json InstanceJson(const PlacedInstance& i) {
  json j = {{"profile", i.profile}, {"start", i.start}};
  if (!i.service) {
    j["service"] = nullptr;
    return j;
  }
  j["service"] = *i.service;
  j["batch"] = i.batch;
  j["procs"] = i.procs;
  j["throughput"] = i.credit;
  j["latency_ms"] = i.latency_ms;
  return j;
}

StatusOr<PlacedInstance> ParseInstance(const json& j, const std::string& source,
                                       const std::string& path) {
  MIGSERVE_RETURN_IF_ERROR(ExpectObject(j, source, path));
  JsonFields f(j, source, path);
  PlacedInstance i;
  MIGSERVE_RETURN_IF_ERROR(f.Get("profile", true, &i.profile));
  MIGSERVE_RETURN_IF_ERROR(f.Get("start", true, &i.start));
  if (!f.Has("service")) return i;
  std::string service;
  MIGSERVE_RETURN_IF_ERROR(f.Get("service", true, &service));
  MIGSERVE_RETURN_IF_ERROR(f.CheckPlainName("service", service));
  i.service = service;
  MIGSERVE_RETURN_IF_ERROR(f.Get("batch", false, &i.batch));
  MIGSERVE_RETURN_IF_ERROR(f.Get("procs", false, &i.procs));
  MIGSERVE_RETURN_IF_ERROR(f.Get("throughput", false, &i.credit));
  MIGSERVE_RETURN_IF_ERROR(f.Get("latency_ms", false, &i.latency_ms));
  if (f.Has("batch") && (i.batch < 1 || i.batch > kMaxBatch)) {
    return f.Error("batch", fmt::format("must be from 1 to {}", kMaxBatch));
  }
  if (i.procs < 1 || i.procs > kMaxProcs) {
    return f.Error("procs", fmt::format("must be from 1 to {}", kMaxProcs));
  }
  for (auto [key, value, range] :
       {std::tuple{"throughput", i.credit, kCreditRange},
        std::tuple{"latency_ms", i.latency_ms, kBatchTimeRange}}) {
    std::string wrong = OutOfRange(value, range);
    if (!wrong.empty()) return f.Error(key, wrong);
  }
  // What the file's own row allows: `procs` servers each completing `batch`
  // samples per `latency_ms` (twice that, for latencies rounded to the ms).
  // A credit above it was not computed by migserve from that row, and
  // routes weighted by it would send a replica more than it can serve.
  if (i.batch >= 1 && i.latency_ms > 0) {
    double most = 2.0 * i.procs * i.batch * 1000.0 / i.latency_ms;
    if (i.credit > most) {
      return f.Error(
          "throughput",
          fmt::format("{} req/s is more than its row can serve: "
                      "{} procs x batch {} in {} ms allow {:.6g}",
                      i.credit, i.procs, i.batch, i.latency_ms, most));
    }
  }
  return i;
}

// The keys of the fixed fields and of the transition summary; every other
// key of a summary is the algorithm's (Summary::extra).
constexpr const char* kSummaryKeys[] = {
    "algorithm",     "gpus",         "status",     "lower_bound",
    "seconds",       "router",       "pod_starts", "repartitioned_gpus",
    "kept_replicas", "starts_bound", "extra_gpus", "transition_nodes",
    "plain_optimum", "plain_placed", "workload"};

json CostJson(const TransitionCost& cost) {
  return {{"gpus", cost.gpus},
          {"pod_starts", cost.pod_starts},
          {"repartitioned_gpus", cost.repartitioned_gpus},
          {"kept_replicas", cost.kept_replicas}};
}

// `f`'s transition cost fields into `cost` (`gpus` too if `with_gpus`).
Status ReadCost(const JsonFields& f, bool with_gpus, TransitionCost* cost) {
  if (with_gpus) MIGSERVE_RETURN_IF_ERROR(f.Get("gpus", false, &cost->gpus));
  MIGSERVE_RETURN_IF_ERROR(f.Get("pod_starts", true, &cost->pod_starts));
  MIGSERVE_RETURN_IF_ERROR(
      f.Get("repartitioned_gpus", false, &cost->repartitioned_gpus));
  return f.Get("kept_replicas", false, &cost->kept_replicas);
}

StatusOr<TransitionSummary> ParseTransition(const json& j,
                                            const std::string& source,
                                            int gpus) {
  JsonFields f(j, source, "summary");
  TransitionSummary t;
  t.cost.gpus = gpus;
  MIGSERVE_RETURN_IF_ERROR(ReadCost(f, false, &t.cost));
  MIGSERVE_RETURN_IF_ERROR(f.Get("starts_bound", false, &t.starts_bound));
  MIGSERVE_RETURN_IF_ERROR(f.Get("extra_gpus", false, &t.extra_gpus));
  MIGSERVE_RETURN_IF_ERROR(f.Get("transition_nodes", false, &t.nodes));
  if (f.Has("plain_optimum")) {
    MIGSERVE_ASSIGN_OR_RETURN(const json* plain, f.Object("plain_optimum"));
    JsonFields p(*plain, source, "summary.plain_optimum");
    MIGSERVE_RETURN_IF_ERROR(ReadCost(p, true, &t.plain_optimum));
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("plain_placed", false, &t.plain_placed));
  return t;
}

StatusOr<Summary> ParseSummary(const json& j, const std::string& source) {
  MIGSERVE_RETURN_IF_ERROR(ExpectObject(j, source, "summary"));
  JsonFields f(j, source, "summary");
  Summary s;
  MIGSERVE_RETURN_IF_ERROR(f.Get("algorithm", false, &s.algorithm));
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpus", false, &s.gpus));
  std::string status = "feasible";
  MIGSERVE_RETURN_IF_ERROR(f.Get("status", false, &status));
  std::optional<SolveStatus> parsed = ParseSolveStatus(status);
  if (!parsed) {
    return f.Error("status", fmt::format("unknown status '{}'", status));
  }
  s.status = *parsed;
  if (f.Has("lower_bound")) {
    int bound = 0;
    MIGSERVE_RETURN_IF_ERROR(f.Get("lower_bound", true, &bound));
    s.lower_bound = bound;
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("seconds", false, &s.seconds));
  s.timings = f.Has("seconds");
  if (f.Has("router")) {
    std::string router;
    MIGSERVE_RETURN_IF_ERROR(f.Get("router", true, &router));
    s.router = queueing::ParseRouter(router);
    if (!s.router) {
      return f.Error("router", fmt::format("must be {}, got '{}'",
                                           queueing::RouterChoices(), router));
    }
  }
  if (f.Has("pod_starts")) {
    MIGSERVE_ASSIGN_OR_RETURN(s.transition, ParseTransition(j, source, s.gpus));
  }
  if (f.Has("workload")) {
    MIGSERVE_ASSIGN_OR_RETURN(const json* origin, f.Object("workload"));
    JsonFields w(*origin, source, "summary.workload");
    for (const auto& [key, value] : origin->items()) {
      if (key != "name" && key != "generation") {
        return w.Error(key, "unknown field (name and generation are)");
      }
    }
    WorkloadOrigin o;
    MIGSERVE_RETURN_IF_ERROR(w.Get("name", true, &o.name));
    MIGSERVE_RETURN_IF_ERROR(w.Get("generation", true, &o.generation));
    if (o.generation < 1) {
      return w.Error("generation", "must be at least 1");
    }
    s.workload = std::move(o);
  }
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kSummaryKeys), std::end(kSummaryKeys), key) ==
        std::end(kSummaryKeys)) {
      s.extra[key] = value;
    }
  }
  return s;
}

json SummaryJson(const Summary& summary) {
  json s = {{"algorithm", summary.algorithm},
            {"gpus", summary.gpus},
            {"status", std::string(SolveStatusName(summary.status))}};
  if (summary.lower_bound) s["lower_bound"] = *summary.lower_bound;
  if (summary.timings) s["seconds"] = summary.seconds;
  if (summary.router) s["router"] = queueing::RouterName(*summary.router);
  if (const std::optional<TransitionSummary>& t = summary.transition) {
    s["pod_starts"] = t->cost.pod_starts;
    s["repartitioned_gpus"] = t->cost.repartitioned_gpus;
    s["kept_replicas"] = t->cost.kept_replicas;
    s["starts_bound"] = t->starts_bound;
    s["extra_gpus"] = t->extra_gpus;
    s["transition_nodes"] = t->nodes;
    s["plain_optimum"] = CostJson(t->plain_optimum);
    s["plain_placed"] = t->plain_placed;
  }
  if (const std::optional<WorkloadOrigin>& w = summary.workload) {
    s["workload"] = {{"name", w->name}, {"generation", w->generation}};
  }
  for (const auto& [key, value] : summary.extra.items()) {
    if (key != "phase_seconds" || summary.timings) s[key] = value;
  }
  return s;
}

// A service's kind and its token terms, if it has them
// (FormatDeployment's; workload/service_kind.h).
Status ParseKindTerms(const JsonFields& sf, workload::Service* s) {
  std::string kind(workload::ServiceKind().name());
  MIGSERVE_RETURN_IF_ERROR(sf.Get("kind", false, &kind));
  std::optional<workload::ServiceKind> parsed =
      workload::ParseServiceKind(kind);
  if (!parsed) {
    return sf.Error(
        "kind", "must be " + workload::ServiceKindChoices() + ", got " + kind);
  }
  s->kind = *parsed;
  if (!s->kind.HasTokenTerms()) return Status::Ok();
  llm::LlmTerms t;
  for (const llm::LlmTermField& field : llm::LlmTermFields()) {
    double* out = &(t.*field.member);
    MIGSERVE_RETURN_IF_ERROR(sf.Get(field.key, field.required, out));
    if (std::string wrong = OutOfRange(*out, field.range);
        !wrong.empty() && (field.required || *out != 0)) {
      return sf.Error(field.key, wrong);
    }
  }
  if (std::string problem = llm::MaxModelLenProblem(t); !problem.empty()) {
    return sf.Error("max_model_len", problem);
  }
  t.latency_ms = s->latency_ms;
  s->tokens = t;
  return Status::Ok();
}

// Gives each LLM service of `services` its model's entry (Service::
// llm_model): the deployment's own `llm_models` (the entries of a table
// not shipped that its credits were searched with), else the shipped
// table's.
Status AttachLlmModels(const JsonFields& f,
                       std::vector<workload::Service>* services) {
  std::shared_ptr<const llm::LlmModelTable> own;
  if (f.Has("llm_models")) {
    MIGSERVE_ASSIGN_OR_RETURN(const json* models, f.Array("llm_models"));
    MIGSERVE_ASSIGN_OR_RETURN(
        llm::LlmModelTable table,
        llm::ParseLlmModelsJson(*models, f.source() + ": llm_models"));
    own = std::make_shared<const llm::LlmModelTable>(std::move(table));
  }
  for (workload::Service& s : *services) {
    if (!s.tokens) continue;
    for (const auto& table : {own, llm::SharedShippedLlmModels()}) {
      if (!table) continue;
      if (StatusOr<const llm::LlmModel*> m = table->Find(s.model); m.ok()) {
        s.llm_model = std::shared_ptr<const llm::LlmModel>(table, *m);
        break;
      }
    }
  }
  return Status::Ok();
}

// The entries of `services`' models that the shipped table does not hold
// as they are, each once: what a reader cannot find there.
json OwnLlmModels(const std::vector<workload::Service>& services) {
  json out = json::array();
  std::set<std::string> named;
  for (const workload::Service& s : services) {
    if (!s.llm_model) continue;
    StatusOr<const llm::LlmModel*> shipped =
        llm::ShippedLlmModels().Find(s.llm_model->name);
    if (shipped.ok() && llm::SameLlmModel(**shipped, *s.llm_model)) continue;
    if (named.insert(s.llm_model->name).second) {
      out.push_back(llm::LlmModelJson(*s.llm_model));
    }
  }
  return out;
}

// The deployment's `services` (each a service as the workload gives it,
// named once, no two the same Kubernetes name), each LLM service with its
// model's entry (AttachLlmModels).
Status ReadServices(const JsonFields& f, std::vector<workload::Service>* out) {
  const std::string& source = f.source();
  if (f.Has("services")) {
    MIGSERVE_ASSIGN_OR_RETURN(const json* services, f.Array("services"));
    std::unordered_set<std::string> names;
    // By the name Kubernetes objects get (DnsLabel): the service with it.
    std::unordered_map<std::string, std::string> labels;
    for (size_t k = 0; k < services->size(); ++k) {
      std::string path = fmt::format("services[{}]", k);
      MIGSERVE_RETURN_IF_ERROR(ExpectObject((*services)[k], source, path));
      JsonFields sf((*services)[k], source, path);
      workload::Service s;
      MIGSERVE_RETURN_IF_ERROR(sf.Get("name", true, &s.name));
      MIGSERVE_RETURN_IF_ERROR(sf.Get("model", false, &s.model));
      MIGSERVE_RETURN_IF_ERROR(sf.CheckPlainName("name", s.name));
      if (!s.model.empty()) {
        MIGSERVE_RETURN_IF_ERROR(sf.CheckPlainName("model", s.model));
      }
      double throughput = 0;
      MIGSERVE_RETURN_IF_ERROR(sf.Get("throughput", false, &throughput));
      MIGSERVE_RETURN_IF_ERROR(sf.Get("latency_ms", false, &s.latency_ms));
      for (auto [key, value, range] :
           {std::tuple{"throughput", throughput, kRateRange},
            std::tuple{"latency_ms", s.latency_ms, kLatencyMsRange}}) {
        // 0: not known (observe writes the services it sees so).
        std::string wrong = value != 0 ? OutOfRange(value, range) : "";
        if (!wrong.empty()) return sf.Error(key, wrong);
      }
      // 0 or within kRateRange, so a Rate.
      s.throughput = Rate::Of(throughput).value();
      if (!names.insert(s.name).second) {
        return sf.Error("name",
                        fmt::format("service '{}' is listed twice", s.name));
      }
      auto [same, fresh] = labels.emplace(DnsLabel(s.name), s.name);
      if (!fresh) {
        return sf.Error(
            "name", fmt::format("services '{}' and '{}' both become '{}' in "
                                "Kubernetes object names; rename one",
                                same->second, s.name, same->first));
      }
      MIGSERVE_RETURN_IF_ERROR(sf.Get("min_replicas", false, &s.min_replicas));
      if (s.min_replicas < 1 || s.min_replicas > 10000) {
        return sf.Error("min_replicas", "must be from 1 to 10000");
      }
      MIGSERVE_RETURN_IF_ERROR(ParseKindTerms(sf, &s));
      out->push_back(std::move(s));
    }
  }
  MIGSERVE_RETURN_IF_ERROR(AttachLlmModels(f, out));
  return Status::Ok();
}

}  // namespace

std::string FormatDeployment(const Deployment& d) {
  json services = json::array();
  for (const workload::Service& s : d.services) {
    json js = {{"name", s.name},
               {"model", s.model},
               {"throughput", s.throughput.value()},
               {"latency_ms", s.latency_ms}};
    if (s.min_replicas > 1) js["min_replicas"] = s.min_replicas;
    if (s.kind != workload::ServiceKind()) js["kind"] = s.kind.name();
    if (s.tokens) {
      // As the workload declares them: the credits (and export's engine
      // arguments) are the token terms', not a profile row's.
      for (const llm::LlmTermField& field : llm::LlmTermFields()) {
        double value = (*s.tokens).*field.member;
        if (value != 0 || field.written_at_zero) js[field.key] = value;
      }
    }
    services.push_back(std::move(js));
  }
  json gpus = json::array();
  for (const DeployedGpu& g : d.gpus) {
    json jg = {{"id", g.id}};
    if (g.node) jg["node"] = *g.node;
    if (g.index) jg["index"] = *g.index;
    if (g.gpu) jg["gpu"] = *g.gpu;
    json instances = json::array();
    for (const PlacedInstance& i : g.instances) {
      instances.push_back(InstanceJson(i));
    }
    jg["instances"] = std::move(instances);
    gpus.push_back(std::move(jg));
  }
  json out = {{"gpu", d.gpu}, {"services", services}, {"gpus", gpus}};
  if (d.survive) {
    out["survive"] = SurviveJson(*d.survive);
  }
  if (d.summary) out["summary"] = SummaryJson(*d.summary);
  if (json models = OwnLlmModels(d.services); !models.empty()) {
    out["llm_models"] = models;
  }
  return out.dump(2) + "\n";
}

StatusOr<Deployment> ParseDeployment(const std::string& text,
                                     const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(json root, ParseJsonObject(text, source));
  JsonFields f(root, source, "");
  Deployment d;
  d.source = source;
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpu", true, &d.gpu));
  MIGSERVE_RETURN_IF_ERROR(ReadServices(f, &d.services));
  MIGSERVE_ASSIGN_OR_RETURN(const json* gpus, f.Array("gpus"));
  for (size_t g = 0; g < gpus->size(); ++g) {
    std::string path = fmt::format("gpus[{}]", g);
    MIGSERVE_RETURN_IF_ERROR(ExpectObject((*gpus)[g], source, path));
    JsonFields gf((*gpus)[g], source, path);
    DeployedGpu out;
    MIGSERVE_RETURN_IF_ERROR(gf.Get("id", true, &out.id));
    if (out.id < 0) return gf.Error("id", "must be >= 0");
    for (auto [key, field] :
         {std::pair{"node", &out.node}, std::pair{"gpu", &out.gpu}}) {
      if (!gf.Has(key)) continue;
      std::string value;
      MIGSERVE_RETURN_IF_ERROR(gf.Get(key, true, &value));
      *field = value;
    }
    if (out.node) {
      std::string problem = ObjectNameProblem(*out.node);
      if (!problem.empty()) return gf.Error("node", problem);
    }
    if (gf.Has("index")) {
      int index = 0;
      MIGSERVE_RETURN_IF_ERROR(gf.Get("index", true, &index));
      if (index < 0) return gf.Error("index", "must be >= 0");
      out.index = index;
    }
    MIGSERVE_ASSIGN_OR_RETURN(const json* instances, gf.Array("instances"));
    for (size_t k = 0; k < instances->size(); ++k) {
      MIGSERVE_ASSIGN_OR_RETURN(
          PlacedInstance i,
          ParseInstance((*instances)[k], source,
                        fmt::format("{}.instances[{}]", path, k)));
      out.instances.push_back(std::move(i));
    }
    d.gpus.push_back(std::move(out));
  }
  if (f.Has("survive")) {
    MIGSERVE_ASSIGN_OR_RETURN(d.survive, ParseSurvive(root["survive"], source));
  }
  // A replica of a service the deployment does not list would be exported
  // and run with no required rate or SLO behind it.
  if (f.Has("services")) MIGSERVE_RETURN_IF_ERROR(CheckReplicaServices(d));
  if (f.Has("summary")) {
    MIGSERVE_ASSIGN_OR_RETURN(Summary s, ParseSummary(root["summary"], source));
    d.summary = std::move(s);
  }
  return d;
}

json SurviveJson(const workload::Survive& survive) {
  return {{"domain", workload::FailureDomainName(survive.domain)},
          {"keep", survive.keep}};
}

StatusOr<workload::Survive> ParseSurvive(const json& j,
                                         const std::string& source) {
  MIGSERVE_RETURN_IF_ERROR(ExpectObject(j, source, "survive"));
  JsonFields f(j, source, "survive");
  std::string domain;
  MIGSERVE_RETURN_IF_ERROR(f.Get("domain", true, &domain));
  std::optional<workload::FailureDomain> parsed =
      workload::ParseFailureDomain(domain);
  if (!parsed) {
    return f.Error("domain",
                   fmt::format("must be gpu or node, got '{}'", domain));
  }
  workload::Survive survive;
  survive.domain = *parsed;
  MIGSERVE_RETURN_IF_ERROR(f.Get("keep", true, &survive.keep));
  if (!(survive.keep > 0 && survive.keep <= 1)) {
    return f.Error("keep",
                   fmt::format("must be in (0, 1], got {}", survive.keep));
  }
  return survive;
}

StatusOr<Deployment> LoadDeployment(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseDeployment(text, path);
}

}  // namespace migserve::deployment
