#include "boundary/csv.h"

#include <charconv>
#include <cmath>
#include <string>

namespace migserve {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

StatusOr<std::vector<std::string>> SplitLine(std::string_view line,
                                             int line_no) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  bool was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      was_quoted = true;
    } else if (c == ',') {
      fields.push_back(was_quoted ? field : std::string(Trim(field)));
      field.clear();
      was_quoted = false;
    } else {
      field += c;
    }
  }
  if (quoted) {
    return Status::InvalidArgument("line " + std::to_string(line_no) +
                                   ": unterminated quoted field");
  }
  fields.push_back(was_quoted ? field : std::string(Trim(field)));
  return fields;
}

}  // namespace

StatusOr<std::vector<CsvRecord>> ParseCsv(std::string_view text) {
  // Excel's "CSV UTF-8" starts with a byte order mark.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<CsvRecord> records;
  int line_no = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view()
                                         : text.substr(end + 1);
    ++line_no;
    if (Trim(line).empty()) continue;
    MIGSERVE_ASSIGN_OR_RETURN(std::vector<std::string> fields,
                              SplitLine(line, line_no));
    records.push_back({line_no, std::move(fields)});
  }
  return records;
}

bool ParseDouble(std::string_view field, double* out) {
  auto [end, ec] =
      std::from_chars(field.data(), field.data() + field.size(), *out);
  return !field.empty() && ec == std::errc() &&
         end == field.data() + field.size() && std::isfinite(*out);
}

bool ParseInt(std::string_view field, int* out) {
  auto [end, ec] =
      std::from_chars(field.data(), field.data() + field.size(), *out);
  return !field.empty() && ec == std::errc() &&
         end == field.data() + field.size();
}

std::string CsvField(std::string_view field) {
  bool needs_quotes =
      field.find_first_of(",\"\n") != std::string_view::npos ||
      (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!needs_quotes) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace migserve
