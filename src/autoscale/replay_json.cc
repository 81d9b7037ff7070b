#include "autoscale/replay_json.h"

#include <fmt/format.h>

#include <utility>

#include "boundary/json_fields.h"

namespace migserve::autoscale {
namespace {

using nlohmann::json;

nlohmann::json RunJson(const ReplayRun& run) {
  return {{"gpu_hours", run.gpu_hours},
          {"short_minutes", run.short_minutes},
          {"short_minutes_by_service", run.short_minutes_by_service},
          {"transitions", run.transitions},
          {"peak_gpus", run.peak_gpus}};
}

Status ReadRun(const JsonFields& f, ReplayRun* run) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpu_hours", true, &run->gpu_hours));
  MIGSERVE_RETURN_IF_ERROR(f.Get("short_minutes", true, &run->short_minutes));
  MIGSERVE_RETURN_IF_ERROR(f.Get("transitions", true, &run->transitions));
  MIGSERVE_RETURN_IF_ERROR(f.Get("peak_gpus", true, &run->peak_gpus));
  MIGSERVE_ASSIGN_OR_RETURN(const json* by_service,
                            f.Object("short_minutes_by_service"));
  JsonFields minutes(*by_service, f.source(),
                     f.Path("short_minutes_by_service"));
  for (const auto& [service, value] : by_service->items()) {
    MIGSERVE_RETURN_IF_ERROR(minutes.Get(
        service.c_str(), true, &run->short_minutes_by_service[service]));
  }
  return Status::Ok();
}

Status ReadEvent(const JsonFields& f, ReplayEvent* e) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("time_s", true, &e->time_s));
  std::string move;
  MIGSERVE_RETURN_IF_ERROR(f.Get("move", true, &move));
  if (move != MoveName(Move::kUp) && move != MoveName(Move::kDown)) {
    return f.Error("move", "expected up or down, got " + move);
  }
  e->move = move == MoveName(Move::kUp) ? Move::kUp : Move::kDown;
  MIGSERVE_RETURN_IF_ERROR(f.Get("reason", true, &e->reason));
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpus_before", true, &e->gpus_before));
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpus_after", true, &e->gpus_after));
  MIGSERVE_RETURN_IF_ERROR(f.Get("pod_starts", true, &e->pod_starts));
  MIGSERVE_RETURN_IF_ERROR(f.Get("makespan_s", true, &e->makespan_s));
  MIGSERVE_RETURN_IF_ERROR(f.Get("problem", false, &e->problem));
  return f.Get("survive_dropped", false, &e->survive_dropped.why);
}

// Reads the list `key` of `f` as values of type T, each checked as Get
// checks one.
template <typename T>
Status ReadValues(const JsonFields& f, const char* key, std::vector<T>* out) {
  MIGSERVE_ASSIGN_OR_RETURN(const json* list, f.Array(key));
  for (size_t k = 0; k < list->size(); ++k) {
    json item = {{"value", (*list)[k]}};
    T value{};
    MIGSERVE_RETURN_IF_ERROR(
        JsonFields(item, f.source(), fmt::format("{}[{}]", f.Path(key), k))
            .Get("value", true, &value));
    out->push_back(value);
  }
  return Status::Ok();
}

Status ReadSample(const JsonFields& f, ReplaySample* s) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("time_s", true, &s->time_s));
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpus", true, &s->gpus));
  return ReadValues(f, "capacity", &s->capacity);
}

}  // namespace

nlohmann::json ReplayJson(const ReplayReport& report) {
  nlohmann::json events = nlohmann::json::array();
  for (const ReplayEvent& e : report.events) {
    events.push_back({{"time_s", e.time_s},
                      {"move", MoveName(e.move)},
                      {"reason", e.reason},
                      {"gpus_before", e.gpus_before},
                      {"gpus_after", e.gpus_after},
                      {"pod_starts", e.pod_starts},
                      {"makespan_s", e.makespan_s},
                      {"problem", e.problem}});
    if (e.survive_dropped.dropped()) {
      events.back()["survive_dropped"] = e.survive_dropped.why;
    }
  }
  nlohmann::json samples = nlohmann::json::array();
  for (const ReplaySample& s : report.samples) {
    samples.push_back(
        {{"time_s", s.time_s}, {"gpus", s.gpus}, {"capacity", s.capacity}});
  }
  return {{"services", report.services},
          {"start_s", report.start_s},
          {"end_s", report.end_s},
          {"policy", RunJson(report.policy)},
          {"static_peak", RunJson(report.static_peak)},
          {"oracle", RunJson(report.oracle)},
          {"declined", report.declined},
          {"max_gpus", report.max_gpus},
          {"over_budget", report.over_budget},
          {"events", events},
          {"samples", samples}};
}

StatusOr<ReplayReport> ParseReplayJson(const std::string& text,
                                       const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(json root, ParseJsonObject(text, source));
  JsonFields f(root, source, "");
  ReplayReport day;
  MIGSERVE_RETURN_IF_ERROR(ReadValues(f, "services", &day.services));
  MIGSERVE_RETURN_IF_ERROR(f.Get("start_s", true, &day.start_s));
  MIGSERVE_RETURN_IF_ERROR(f.Get("end_s", true, &day.end_s));
  if (day.end_s < day.start_s) {
    return f.Error("end_s", "earlier than start_s");
  }
  for (auto [key, run] : {std::pair{"policy", &day.policy},
                          {"static_peak", &day.static_peak},
                          {"oracle", &day.oracle}}) {
    MIGSERVE_ASSIGN_OR_RETURN(const json* object, f.Object(key));
    MIGSERVE_RETURN_IF_ERROR(
        ReadRun(JsonFields(*object, source, f.Path(key)), run));
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("declined", false, &day.declined));
  MIGSERVE_RETURN_IF_ERROR(f.Get("max_gpus", false, &day.max_gpus));
  MIGSERVE_RETURN_IF_ERROR(f.Get("over_budget", false, &day.over_budget));
  MIGSERVE_RETURN_IF_ERROR(
      f.Objects<ReplayEvent>("events", ReadEvent, &day.events));
  MIGSERVE_RETURN_IF_ERROR(
      f.Objects<ReplaySample>("samples", ReadSample, &day.samples));
  for (size_t k = 0; k < day.samples.size(); ++k) {
    const ReplaySample& s = day.samples[k];
    std::string path = fmt::format("samples[{}]", k);
    if (s.capacity.size() != day.services.size()) {
      return Status::InvalidArgument(
          fmt::format("{}: {}.capacity: {} values for {} services", source,
                      path, s.capacity.size(), day.services.size()));
    }
    if (k > 0 && s.time_s < day.samples[k - 1].time_s) {
      return Status::InvalidArgument(fmt::format(
          "{}: {}.time_s: earlier than the sample before it", source, path));
    }
  }
  return day;
}

}  // namespace migserve::autoscale
