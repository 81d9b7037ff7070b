#include "cluster/transition_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "boundary/json_fields.h"
#include "cluster/apply.h"

namespace migserve::cluster {
namespace {

using nlohmann::json;

json ActionJson(const ReportedAction& a) {
  json j = {{"id", a.id},           {"kind", a.kind},   {"gpu", a.gpu},
            {"start_s", a.start_s}, {"end_s", a.end_s}, {"ok", a.ok},
            {"text", a.text}};
  if (a.service) j["service"] = *a.service;
  if (a.profile) j["profile"] = *a.profile;
  if (a.start) j["start"] = *a.start;
  if (a.to) j["to"] = *a.to;
  if (a.to_start) j["to_start"] = *a.to_start;
  if (a.local) j["local"] = *a.local;
  return j;
}

// Reads the optional field `key` of `f` into `out`.
template <typename T>
Status Optional(const JsonFields& f, const char* key, std::optional<T>* out) {
  if (!f.Has(key)) return Status::Ok();
  T value{};
  MIGSERVE_RETURN_IF_ERROR(f.Get(key, true, &value));
  *out = std::move(value);
  return Status::Ok();
}

Status ReadAction(const JsonFields& f, ReportedAction* a) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("id", true, &a->id));
  MIGSERVE_RETURN_IF_ERROR(f.Get("kind", true, &a->kind));
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpu", true, &a->gpu));
  MIGSERVE_RETURN_IF_ERROR(f.Get("start_s", true, &a->start_s));
  MIGSERVE_RETURN_IF_ERROR(f.Get("end_s", true, &a->end_s));
  MIGSERVE_RETURN_IF_ERROR(f.Get("ok", true, &a->ok));
  MIGSERVE_RETURN_IF_ERROR(f.Get("text", true, &a->text));
  MIGSERVE_RETURN_IF_ERROR(Optional(f, "service", &a->service));
  MIGSERVE_RETURN_IF_ERROR(Optional(f, "profile", &a->profile));
  MIGSERVE_RETURN_IF_ERROR(Optional(f, "start", &a->start));
  MIGSERVE_RETURN_IF_ERROR(Optional(f, "to", &a->to));
  MIGSERVE_RETURN_IF_ERROR(Optional(f, "to_start", &a->to_start));
  return Optional(f, "local", &a->local);
}

Status ReadService(const JsonFields& f, ReportedService* s) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("name", true, &s->name));
  MIGSERVE_RETURN_IF_ERROR(f.Get("floor", true, &s->floor));
  MIGSERVE_RETURN_IF_ERROR(f.Get("lowest", true, &s->lowest));
  MIGSERVE_RETURN_IF_ERROR(
      f.Get("min_satisfaction", false, &s->min_satisfaction));
  MIGSERVE_RETURN_IF_ERROR(f.Get("final", false, &s->final_capacity));
  return f.Get("required", false, &s->required);
}

Status ReadSample(const JsonFields& f, CapacitySample* sample) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("time_s", true, &sample->time_s));
  MIGSERVE_ASSIGN_OR_RETURN(const json* capacity, f.Object("capacity"));
  JsonFields rates(*capacity, f.source(), f.Path("capacity"));
  for (const auto& [service, rate] : capacity->items()) {
    MIGSERVE_RETURN_IF_ERROR(
        rates.Get(service.c_str(), true, &sample->capacity[service]));
  }
  return Status::Ok();
}

// The list `key` of strings.
Status Strings(const JsonFields& f, const char* key,
               std::vector<std::string>* out) {
  MIGSERVE_ASSIGN_OR_RETURN(const json* list, f.Array(key));
  for (size_t k = 0; k < list->size(); ++k) {
    if (!(*list)[k].is_string()) {
      return f.Error(fmt::format("{}[{}]", key, k),
                     "expected a string, got " + (*list)[k].dump());
    }
    out->push_back((*list)[k].get<std::string>());
  }
  return Status::Ok();
}

}  // namespace

std::vector<ReportedAction> ReportTimeline(
    const std::vector<TimelineEntry>& timeline) {
  std::vector<ReportedAction> out;
  for (const TimelineEntry& e : timeline) {
    const Action& a = e.action;
    ReportedAction r;
    r.id = a.id;
    r.kind = KindName(a.kind);
    r.gpu = a.at.gpu.ToString();
    r.start_s = e.start_s;
    r.end_s = e.end_s;
    r.ok = e.ok;
    r.text = Describe(a);
    if (a.kind != ActionKind::kRepartition) {
      r.service = a.replica.service;
      r.profile = a.at.model->profiles.at(a.at.instance.profile).name;
      r.start = a.at.instance.start;
    }
    if (a.kind == ActionKind::kMigrate) {
      r.to = a.to.gpu.ToString();
      r.to_start = a.to.instance.start;
      r.local = e.local;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string FormatTransitionReport(const TransitionReport& r) {
  json services = json::array(), timeline = json::array(),
       history = json::array();
  for (const ReportedService& s : r.services) {
    services.push_back({{"name", s.name},
                        {"floor", s.floor},
                        {"lowest", s.lowest},
                        {"min_satisfaction", s.min_satisfaction},
                        {"final", s.final_capacity},
                        {"required", s.required}});
  }
  for (const ReportedAction& a : r.timeline) timeline.push_back(ActionJson(a));
  for (const CapacitySample& c : r.capacity_history) {
    history.push_back({{"time_s", c.time_s}, {"capacity", c.capacity}});
  }
  json out = {{"from", r.from},
              {"to", r.to},
              {"seed", r.seed},
              {"actions", r.actions},
              {"makespan_s", r.makespan_s},
              {"time_s",
               {{"planner", r.planner_s},
                {"repartition", r.repartition_s},
                {"replicas", r.replicas_s}}},
              {"peak_gpus", r.peak_gpus},
              {"plans", r.plans},
              {"final_gpus", r.final_gpus},
              {"target_gpus", r.target_gpus},
              {"services", services},
              {"timeline", timeline},
              {"capacity_history", history},
              {"problems", r.problems},
              {"short_services", r.short_services},
              {"ok", r.ok()}};
  if (!r.degraded.empty()) out["degraded"] = r.degraded;
  if (r.survive_dropped.dropped()) {
    out["survive_dropped"] = r.survive_dropped.why;
  }
  return out.dump(2) + "\n";
}

StatusOr<TransitionReport> ParseTransitionReport(const std::string& text,
                                                 const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(json j, ParseJsonObject(text, source, "report"));
  JsonFields f(j, source, "");
  TransitionReport r;
  MIGSERVE_RETURN_IF_ERROR(f.Get("from", false, &r.from));
  MIGSERVE_RETURN_IF_ERROR(f.Get("to", false, &r.to));
  MIGSERVE_RETURN_IF_ERROR(f.Get("seed", false, &r.seed));
  if (f.Has("actions")) {
    MIGSERVE_ASSIGN_OR_RETURN(const json* actions, f.Object("actions"));
    JsonFields counts(*actions, source, "actions");
    for (const auto& [kind, count] : actions->items()) {
      MIGSERVE_RETURN_IF_ERROR(
          counts.Get(kind.c_str(), true, &r.actions[kind]));
    }
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("makespan_s", true, &r.makespan_s));
  if (f.Has("time_s")) {
    MIGSERVE_ASSIGN_OR_RETURN(const json* time, f.Object("time_s"));
    JsonFields t(*time, source, "time_s");
    MIGSERVE_RETURN_IF_ERROR(t.Get("planner", false, &r.planner_s));
    MIGSERVE_RETURN_IF_ERROR(t.Get("repartition", false, &r.repartition_s));
    MIGSERVE_RETURN_IF_ERROR(t.Get("replicas", false, &r.replicas_s));
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("peak_gpus", true, &r.peak_gpus));
  MIGSERVE_RETURN_IF_ERROR(f.Get("plans", false, &r.plans));
  MIGSERVE_RETURN_IF_ERROR(f.Get("final_gpus", true, &r.final_gpus));
  MIGSERVE_RETURN_IF_ERROR(f.Get("target_gpus", false, &r.target_gpus));
  MIGSERVE_RETURN_IF_ERROR(f.Objects("services", ReadService, &r.services));
  MIGSERVE_RETURN_IF_ERROR(f.Objects("timeline", ReadAction, &r.timeline));
  MIGSERVE_RETURN_IF_ERROR(
      f.Objects("capacity_history", ReadSample, &r.capacity_history));
  if (f.Has("problems")) {
    MIGSERVE_RETURN_IF_ERROR(Strings(f, "problems", &r.problems));
  }
  MIGSERVE_RETURN_IF_ERROR(Strings(f, "short_services", &r.short_services));
  MIGSERVE_RETURN_IF_ERROR(f.Get("degraded", false, &r.degraded));
  MIGSERVE_RETURN_IF_ERROR(
      f.Get("survive_dropped", false, &r.survive_dropped.why));
  bool ok = true;
  MIGSERVE_RETURN_IF_ERROR(f.Get("ok", true, &ok));
  if (ok != r.ok() && f.Has("problems")) {
    return f.Error("ok", "disagrees with problems");
  }
  if (!f.Has("problems") && !ok) {
    r.problems.push_back("the report says it is not ok");
  }
  return r;
}

}  // namespace migserve::cluster
