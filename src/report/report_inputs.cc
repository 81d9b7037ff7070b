#include "report/report_inputs.h"

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

}  // namespace

StatusOr<std::vector<ComparedRow>> ParseCompareJson(const std::string& text,
                                                    const std::string& source) {
  return ReadList<ComparedRow>(text, source, "rows", ReadRow);
}

StatusOr<std::vector<ServedService>> ParseServeJson(const std::string& text,
                                                    const std::string& source) {
  return ReadList<ServedService>(text, source, "services", ReadService);
}

}  // namespace migserve::report
