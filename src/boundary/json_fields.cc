#include "boundary/json_fields.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "boundary/csv.h"
#include "boundary/plain_name.h"

namespace migserve {

using nlohmann::json;

namespace {

// InvalidArgument "SOURCE:LINE: key 'KEY' given twice in one object", LINE
// that of the `nth` key named `key` (a key is its quoted text and a colon:
// no string value is followed by one).
Status KeyGivenTwice(const std::string& text, const std::string& source,
                     const std::string& key, int nth) {
  const std::string quoted = json(key).dump();
  size_t at = 0;
  for (int found = 0; found < nth;) {
    at = text.find(quoted, at);
    if (at == std::string::npos) break;
    at += quoted.size();
    size_t next = text.find_first_not_of(" \t\r\n", at);
    if (next != std::string::npos && text[next] == ':') ++found;
  }
  if (at == std::string::npos) {
    return Status::InvalidArgument(
        fmt::format("{}: key '{}' given twice in one object", source, key));
  }
  return Status::InvalidArgument(
      fmt::format("{}:{}: key '{}' given twice in one object", source,
                  1 + std::count(text.begin(), text.begin() + at, '\n'), key));
}

}  // namespace

StatusOr<json> ParseJson(const std::string& text, const std::string& source) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return Status::InvalidArgument(source + ": empty file; expected JSON");
  }
  if (text[first] != '{' && text[first] != '[') {
    return Status::InvalidArgument(fmt::format(
        "{}: not JSON (it starts with '{}'); deployments and plans are the "
        "JSON migserve writes (a workload or profile file given here?)",
        source,
        text.substr(first,
                    std::min<size_t>(12, text.find('\n', first) - first))));
  }
  // Keys seen in each open object, and the first key given twice with the
  // count of its occurrences up to it: nlohmann keeps the last of a
  // duplicate silently, and a file edited by hand must not mean two things.
  std::vector<std::set<std::string>> open;
  std::map<std::string, int> occurrences;
  std::optional<std::pair<std::string, int>> twice;
  auto check = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open.emplace_back();
    if (event == json::parse_event_t::object_end) open.pop_back();
    if (event == json::parse_event_t::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      int seen = ++occurrences[key];
      if (!open.back().insert(key).second && !twice) twice = {key, seen};
    }
    return true;
  };
  try {
    json parsed = json::parse(text, check);
    if (twice) return KeyGivenTwice(text, source, twice->first, twice->second);
    return parsed;
  } catch (const json::parse_error& e) {
    size_t byte = std::min<size_t>(e.byte, text.size());
    int line = 1, column = 1;
    for (size_t i = 0; i + 1 < byte; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    size_t colon = what.rfind(": ");
    return Status::InvalidArgument(fmt::format(
        "{}:{}:{}: invalid JSON: {}", source, line, column,
        colon == std::string::npos ? what : what.substr(colon + 2)));
  } catch (const json::exception& e) {
    // A number too large for a double (found by fuzz/), and the like.
    std::string what = e.what();
    size_t bracket = what.find("] ");
    return Status::InvalidArgument(fmt::format(
        "{}: invalid JSON: {}", source,
        bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
}

Status ExpectObject(const json& j, const std::string& source,
                    const std::string& path) {
  if (j.is_object()) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "{}: {}: expected an object", source, path.empty() ? "document" : path));
}

std::string JsonFields::Path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

Status JsonFields::Error(std::string_view key, std::string_view reason) const {
  return Status::InvalidArgument(
      fmt::format("{}: {}: {}", source_, Path(key), reason));
}

Status JsonFields::CheckPlainName(std::string_view key,
                                  std::string_view value) const {
  std::string problem = PlainNameProblem(value);
  return problem.empty() ? Status::Ok() : Error(key, problem);
}

StatusOr<json> ParseJsonObject(const std::string& text,
                               const std::string& source,
                               const std::string& what) {
  MIGSERVE_ASSIGN_OR_RETURN(json j, ParseJson(text, source));
  MIGSERVE_RETURN_IF_ERROR(ExpectObject(j, source, what));
  return j;
}

StatusOr<const json*> JsonFields::Array(const char* key) const {
  if (!Has(key)) return Error(key, "missing");
  if (!object_[key].is_array()) return Error(key, "expected a list");
  return &object_[key];
}

StatusOr<const json*> JsonFields::Object(const char* key) const {
  if (!Has(key)) return Error(key, "missing");
  if (!object_[key].is_object()) return Error(key, "expected an object");
  return &object_[key];
}

const json* ObjectAt(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || !it->is_object() ? nullptr : &*it;
}

const json* ArrayAt(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || !it->is_array() ? nullptr : &*it;
}

std::optional<std::string> StringAt(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<int> IntAt(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    auto v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
      return std::nullopt;
    }
    return static_cast<int>(v);
  }
  auto v = it->get<int64_t>();
  if (v < std::numeric_limits<int>::min() ||
      v > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(v);
}

std::optional<std::string> StringField(const json& object, const char* map,
                                       const char* key) {
  const json* m = ObjectAt(object, map);
  return m == nullptr ? std::nullopt : StringAt(*m, key);
}

std::optional<int> IntField(const json& object, const char* map,
                            const char* key) {
  std::optional<std::string> text = StringField(object, map, key);
  int value = 0;
  if (!text || !ParseInt(*text, &value)) return std::nullopt;
  return value;
}

}  // namespace migserve
