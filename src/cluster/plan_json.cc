#include "cluster/plan_json.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "boundary/json_fields.h"
#include "mig/gpu_catalog.h"

namespace migserve::cluster {
namespace {

using nlohmann::json;
using Models = std::map<GpuId, const mig::GpuModel*>;

json InstanceJson(const mig::GpuModel& gpu, const mig::Instance& i) {
  return {{"profile", gpu.profiles[i.profile].name}, {"start", i.start}};
}

json GpuJson(const GpuId& id) {
  return {{"node", id.node}, {"index", id.index}};
}

json RefJson(const InstanceRef& ref) {
  json j = GpuJson(ref.gpu);
  j.update(InstanceJson(*ref.model, ref.instance));
  return j;
}

// The replica's fields; a delete names only its service and throughput
// (ParseReplica reads them back the same way).
void AddReplica(const Replica& r, bool full, json* j) {
  (*j)["service"] = r.service;
  (*j)["throughput"] = r.credit;
  if (!full) return;
  (*j)["batch"] = r.batch;
  (*j)["procs"] = r.procs;
  (*j)["latency_ms"] = r.latency_ms;
  if (!r.model.empty()) (*j)["model"] = r.model;
}

json ActionJson(const Action& a) {
  json j = {{"id", a.id}, {"kind", KindName(a.kind)}};
  switch (a.kind) {
    case ActionKind::kCreate:
    case ActionKind::kDelete:
      j.update(RefJson(a.at));
      AddReplica(a.replica, a.kind == ActionKind::kCreate, &j);
      break;
    case ActionKind::kMigrate:
      AddReplica(a.replica, true, &j);
      j["from"] = RefJson(a.at);
      j["to"] = RefJson(a.to);
      break;
    case ActionKind::kRepartition: {
      j.update(GpuJson(a.at.gpu));
      json remove = json::array(), add = json::array();
      for (const mig::Instance& i : a.remove)
        remove.push_back(InstanceJson(*a.at.model, i));
      for (const mig::Instance& i : a.add)
        add.push_back(InstanceJson(*a.at.model, i));
      j["remove"] = std::move(remove);
      j["add"] = std::move(add);
      break;
    }
  }
  j["after"] = a.after;
  return j;
}

// Reads "node" and "index" of the object `f`.
StatusOr<GpuId> ParseGpuRef(const JsonFields& f) {
  GpuId id;
  MIGSERVE_RETURN_IF_ERROR(f.Get("node", true, &id.node));
  MIGSERVE_RETURN_IF_ERROR(f.Get("index", true, &id.index));
  if (id.index < 0) return f.Error("index", "must be >= 0");
  return id;
}

StatusOr<Models> ParseModels(const JsonFields& root,
                             const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(const json* gpus, root.Array("gpus"));
  Models models;
  for (size_t k = 0; k < gpus->size(); ++k) {
    std::string path = fmt::format("gpus[{}]", k);
    MIGSERVE_RETURN_IF_ERROR(ExpectObject((*gpus)[k], source, path));
    JsonFields f((*gpus)[k], source, path);
    MIGSERVE_ASSIGN_OR_RETURN(GpuId id, ParseGpuRef(f));
    std::string name;
    MIGSERVE_RETURN_IF_ERROR(f.Get("gpu", true, &name));
    auto model = mig::GpuCatalog::Default().Find(name);
    if (!model.ok()) return f.Error("gpu", model.status().message());
    if (!models.emplace(id, *model).second) {
      return f.Error("node", id.ToString() + " is listed twice");
    }
  }
  return models;
}

StatusOr<mig::Instance> ParseInstance(const json& j, const std::string& source,
                                      const std::string& path,
                                      const mig::GpuModel& gpu) {
  MIGSERVE_RETURN_IF_ERROR(ExpectObject(j, source, path));
  JsonFields f(j, source, path);
  std::string profile;
  mig::Instance out;
  MIGSERVE_RETURN_IF_ERROR(f.Get("profile", true, &profile));
  MIGSERVE_RETURN_IF_ERROR(f.Get("start", true, &out.start));
  out.profile = gpu.FindProfile(profile);
  if (out.profile < 0) {
    return f.Error("profile",
                   fmt::format("{} has no profile {}", gpu.name, profile));
  }
  return out;
}

// Reads the GPU of object `j` and returns it with its model.
StatusOr<InstanceRef> ParseGpuOf(const json& j, const std::string& source,
                                 const std::string& path,
                                 const Models& models) {
  MIGSERVE_RETURN_IF_ERROR(ExpectObject(j, source, path));
  JsonFields f(j, source, path);
  InstanceRef ref;
  MIGSERVE_ASSIGN_OR_RETURN(ref.gpu, ParseGpuRef(f));
  auto model = models.find(ref.gpu);
  if (model == models.end()) {
    return f.Error("node", fmt::format("GPU {} is not listed in \"gpus\"",
                                       ref.gpu.ToString()));
  }
  ref.model = model->second;
  return ref;
}

StatusOr<InstanceRef> ParseRef(const json& j, const std::string& source,
                               const std::string& path, const Models& models) {
  MIGSERVE_ASSIGN_OR_RETURN(InstanceRef ref,
                            ParseGpuOf(j, source, path, models));
  MIGSERVE_ASSIGN_OR_RETURN(ref.instance,
                            ParseInstance(j, source, path, *ref.model));
  return ref;
}

Status ParseReplica(const JsonFields& f, bool full, Replica* r) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("service", true, &r->service));
  MIGSERVE_RETURN_IF_ERROR(f.Get("throughput", true, &r->credit));
  if (!full) return Status::Ok();
  MIGSERVE_RETURN_IF_ERROR(f.Get("batch", false, &r->batch));
  MIGSERVE_RETURN_IF_ERROR(f.Get("procs", false, &r->procs));
  MIGSERVE_RETURN_IF_ERROR(f.Get("model", false, &r->model));
  return f.Get("latency_ms", false, &r->latency_ms);
}

StatusOr<std::vector<mig::Instance>> ParseInstances(const JsonFields& f,
                                                    const char* key,
                                                    const std::string& source,
                                                    const std::string& path,
                                                    const mig::GpuModel& gpu) {
  MIGSERVE_ASSIGN_OR_RETURN(const json* list, f.Array(key));
  std::vector<mig::Instance> out;
  for (size_t k = 0; k < list->size(); ++k) {
    MIGSERVE_ASSIGN_OR_RETURN(
        mig::Instance i,
        ParseInstance((*list)[k], source,
                      fmt::format("{}.{}[{}]", path, key, k), gpu));
    out.push_back(i);
  }
  return out;
}

StatusOr<Action> ParseAction(const json& j, const std::string& source,
                             const std::string& path, const Models& models,
                             const std::set<int>& earlier) {
  MIGSERVE_RETURN_IF_ERROR(ExpectObject(j, source, path));
  JsonFields f(j, source, path);
  Action a;
  std::string kind;
  MIGSERVE_RETURN_IF_ERROR(f.Get("id", true, &a.id));
  MIGSERVE_RETURN_IF_ERROR(f.Get("kind", true, &kind));
  if (earlier.count(a.id) > 0) {
    return f.Error("id", fmt::format("{} is used twice", a.id));
  }
  if (kind == "create" || kind == "delete") {
    a.kind = kind == "create" ? ActionKind::kCreate : ActionKind::kDelete;
    MIGSERVE_ASSIGN_OR_RETURN(a.at, ParseRef(j, source, path, models));
    MIGSERVE_RETURN_IF_ERROR(
        ParseReplica(f, a.kind == ActionKind::kCreate, &a.replica));
  } else if (kind == "migrate") {
    a.kind = ActionKind::kMigrate;
    MIGSERVE_RETURN_IF_ERROR(ParseReplica(f, true, &a.replica));
    MIGSERVE_ASSIGN_OR_RETURN(const json* from, f.Object("from"));
    MIGSERVE_ASSIGN_OR_RETURN(const json* to, f.Object("to"));
    MIGSERVE_ASSIGN_OR_RETURN(a.at,
                              ParseRef(*from, source, path + ".from", models));
    MIGSERVE_ASSIGN_OR_RETURN(a.to,
                              ParseRef(*to, source, path + ".to", models));
  } else if (kind == "repartition") {
    a.kind = ActionKind::kRepartition;
    MIGSERVE_ASSIGN_OR_RETURN(a.at, ParseGpuOf(j, source, path, models));
    MIGSERVE_ASSIGN_OR_RETURN(
        a.remove, ParseInstances(f, "remove", source, path, *a.at.model));
    MIGSERVE_ASSIGN_OR_RETURN(
        a.add, ParseInstances(f, "add", source, path, *a.at.model));
  } else {
    return f.Error("kind", fmt::format("unknown kind \"{}\" (create, delete, "
                                       "migrate or repartition)",
                                       kind));
  }
  if (!f.Has("after")) return a;
  MIGSERVE_ASSIGN_OR_RETURN(const json* after, f.Array("after"));
  for (const json& id : *after) {
    if (!id.is_number_integer() || earlier.count(id.get<int>()) == 0) {
      return f.Error(
          "after", fmt::format("{} is not an action listed before", id.dump()));
    }
    a.after.push_back(id.get<int>());
  }
  return a;
}

}  // namespace

std::string FormatPlan(const TransitionPlan& plan) {
  Models models;
  json actions = json::array();
  for (const Action& a : plan.actions) {
    models.emplace(a.at.gpu, a.at.model);
    if (a.kind == ActionKind::kMigrate) models.emplace(a.to.gpu, a.to.model);
    actions.push_back(ActionJson(a));
  }
  json gpus = json::array();
  for (const auto& [id, model] : models) {
    json g = GpuJson(id);
    g["gpu"] = model->name;
    gpus.push_back(std::move(g));
  }
  return json{{"gpus", gpus}, {"actions", actions}}.dump(2) + "\n";
}

StatusOr<TransitionPlan> ParsePlan(const std::string& text,
                                   const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(json root, ParseJsonObject(text, source));
  JsonFields f(root, source, "");
  MIGSERVE_ASSIGN_OR_RETURN(Models models, ParseModels(f, source));
  MIGSERVE_ASSIGN_OR_RETURN(const json* actions, f.Array("actions"));
  TransitionPlan plan;
  std::set<int> earlier;
  for (size_t k = 0; k < actions->size(); ++k) {
    MIGSERVE_ASSIGN_OR_RETURN(
        Action a, ParseAction((*actions)[k], source,
                              fmt::format("actions[{}]", k), models, earlier));
    earlier.insert(a.id);
    plan.actions.push_back(std::move(a));
  }
  return plan;
}

}  // namespace migserve::cluster
