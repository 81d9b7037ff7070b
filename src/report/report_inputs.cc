#include "report/report_inputs.h"

#include "boundary/json_fields.h"

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

}  // namespace

StatusOr<std::vector<ComparedRow>> ParseCompareJson(const std::string& text,
                                                    const std::string& source) {
  return ReadList<ComparedRow>(text, source, "rows", ReadRow);
}

}  // namespace migserve::report
