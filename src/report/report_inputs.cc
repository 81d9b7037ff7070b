#include "report/report_inputs.h"

#include <fmt/format.h>

#include <utility>

#include "util/json_fields.h"

namespace migserve::report {
namespace {

using nlohmann::json;

// The objects of the list `key` of the document `text`, each read by
// `read`.
template <typename T, typename Read>
StatusOr<std::vector<T>> ReadList(const std::string& text,
                                  const std::string& source, const char* key,
                                  Read read) {
  MIGSERVE_ASSIGN_OR_RETURN(json root, ParseJsonObject(text, source));
  std::vector<T> out;
  MIGSERVE_RETURN_IF_ERROR(
      JsonFields(root, source, "").Objects(key, read, &out));
  return out;
}

Status ReadRow(const JsonFields& f, ComparedRow* row) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("name", true, &row->name));
  std::string kind;
  MIGSERVE_RETURN_IF_ERROR(f.Get("kind", true, &kind));
  row->bound = kind == "bound";
  if (f.Has("gpus")) {
    double gpus = 0;
    MIGSERVE_RETURN_IF_ERROR(f.Get("gpus", true, &gpus));
    row->gpus = gpus;
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("status", !row->bound, &row->status));
  return f.Get("note", false, &row->note);
}

Status ReadService(const JsonFields& f, ServedService* s) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("service", true, &s->service));
  for (std::string q : {"p50", "p90", "p99"}) {
    double ms = 0;
    MIGSERVE_RETURN_IF_ERROR(f.Get((q + "_ms").c_str(), true, &ms));
    s->latency_ms.emplace_back(q, ms);
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("slo_ms", true, &s->slo_ms));
  return f.Get("within_slo", true, &s->within_slo);
}

Status ReadRun(const JsonFields& f, ReplayedDay::Run* run) {
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

Status ReadEvent(const JsonFields& f, ReplayedDay::Event* e) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("time_s", true, &e->time_s));
  MIGSERVE_RETURN_IF_ERROR(f.Get("move", true, &e->move));
  if (e->move != "up" && e->move != "down") {
    return f.Error("move", "expected up or down, got " + e->move);
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("reason", true, &e->reason));
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpus_before", true, &e->gpus_before));
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpus_after", true, &e->gpus_after));
  MIGSERVE_RETURN_IF_ERROR(f.Get("pod_starts", true, &e->pod_starts));
  MIGSERVE_RETURN_IF_ERROR(f.Get("makespan_s", true, &e->makespan_s));
  return f.Get("problem", false, &e->problem);
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

Status ReadSample(const JsonFields& f, ReplayedDay::Sample* s) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("time_s", true, &s->time_s));
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpus", true, &s->gpus));
  return ReadValues(f, "capacity", &s->capacity);
}

}  // namespace

StatusOr<std::vector<ComparedRow>> ParseCompareJson(const std::string& text,
                                                    const std::string& source) {
  return ReadList<ComparedRow>(text, source, "rows", ReadRow);
}

StatusOr<std::vector<ServedService>> ParseServeJson(const std::string& text,
                                                    const std::string& source) {
  return ReadList<ServedService>(text, source, "services", ReadService);
}

StatusOr<ReplayedDay> ParseReplayJson(const std::string& text,
                                      const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(json root, ParseJsonObject(text, source));
  JsonFields f(root, source, "");
  ReplayedDay day;
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
  MIGSERVE_RETURN_IF_ERROR(
      f.Objects<ReplayedDay::Event>("events", ReadEvent, &day.events));
  MIGSERVE_RETURN_IF_ERROR(
      f.Objects<ReplayedDay::Sample>("samples", ReadSample, &day.samples));
  for (size_t k = 0; k < day.samples.size(); ++k) {
    const ReplayedDay::Sample& s = day.samples[k];
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

}  // namespace migserve::report
