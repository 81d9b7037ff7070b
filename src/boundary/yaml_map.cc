#include "boundary/yaml_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>

#include "util/interrupt.h"

namespace migserve {

namespace {

int LineOf(const YAML::Node& node) {
  return node.Mark().line >= 0 ? node.Mark().line + 1 : 1;
}

// Walks `node` as a reader of it would, its aliases expanded, counting the
// nodes it visits in `*visits` (at most `max_visits`) and refusing a
// mapping that gives a key twice or nesting deeper than kMaxYamlDepth.
Status CheckTree(const YAML::Node& node, const std::string& source, int depth,
                 long max_visits, long* visits) {
  if (++*visits > max_visits) {
    return Status::InvalidArgument(fmt::format(
        "{}:{}: the document expands to more than {} nodes through its "
        "aliases (an alias bomb?)",
        source, LineOf(node), max_visits));
  }
  if (depth >= kMaxYamlDepth) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: nested deeper than {} levels", source, LineOf(node),
                    kMaxYamlDepth));
  }
  if (node.IsSequence()) {
    for (const YAML::Node& child : node) {
      MIGSERVE_RETURN_IF_ERROR(
          CheckTree(child, source, depth + 1, max_visits, visits));
    }
  } else if (node.IsMap()) {
    std::map<std::string, int> lines;  // scalar key -> its line
    for (const auto& entry : node) {
      if (entry.first.IsScalar()) {
        auto [at, added] =
            lines.emplace(entry.first.Scalar(), LineOf(entry.first));
        if (!added) {
          return Status::InvalidArgument(fmt::format(
              "{}:{}: key '{}' given twice (first at line {})", source,
              LineOf(entry.first), entry.first.Scalar(), at->second));
        }
      }
      MIGSERVE_RETURN_IF_ERROR(
          CheckTree(entry.second, source, depth + 1, max_visits, visits));
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<YAML::Node> ParseYaml(const std::string& text,
                               const std::string& source) {
  // Asked to stop already: no seconds of reading first.
  if (Interrupted()) {
    return Status::Aborted(source + ": interrupted before reading it");
  }
  YAML::Node root;
  // yaml-cpp reads a region's workload (16 MB) for seconds without a
  // check, and the walk below takes as long again: a signal meanwhile
  // ends the command at once.
  QuitAtOnce unpolled;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
  // Plain text of N bytes holds fewer than N nodes: aliases that expand
  // far beyond that are a bomb, not a configuration.
  long visits = 0;
  MIGSERVE_RETURN_IF_ERROR(CheckTree(
      root, source, 0,
      std::max<long>(kMinYamlVisits, 2 * static_cast<long>(text.size())),
      &visits));
  return root;
}

StatusOr<YamlMap> YamlMap::Open(const YAML::Node& node,
                                const std::string& source,
                                const std::string& path) {
  if (!node.IsMap()) {
    int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 1;
    return Status::InvalidArgument(
        fmt::format("{}:{}: {}: expected a mapping", source, line,
                    path.empty() ? "document" : path));
  }
  return YamlMap(node, source, path);
}

std::string YamlMap::FieldPath(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return fmt::format("{}.{}", path_, key);
}

Status YamlMap::Error(std::string_view key, std::string_view reason) const {
  int line = this->line();
  YAML::Node value = node_[std::string(key)];
  if (value.IsDefined() && value.Mark().line >= 0) line = value.Mark().line + 1;
  return Status::InvalidArgument(
      fmt::format("{}:{}: {}: {}", source_, line, FieldPath(key), reason));
}

template <typename T>
Status YamlMap::Get(std::string_view key, bool required, const char* type_name,
                    T* out) const {
  YAML::Node value = node_[std::string(key)];
  if (!value.IsDefined() || value.IsNull()) {
    return required ? Error(key, "missing") : Status::Ok();
  }
  std::string shown = value.IsScalar() ? "'" + value.Scalar() + "'"
                                       : std::string("a collection");
  try {
    *out = value.as<T>();
  } catch (const YAML::Exception&) {
    return Error(key, fmt::format("expected {}, got {}", type_name, shown));
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*out)) {
      return Error(key, fmt::format("expected a finite number, got {}", shown));
    }
  }
  return Status::Ok();
}

Status YamlMap::GetString(std::string_view key, bool required,
                          std::string* out) const {
  // A collection is no string, whatever yaml-cpp would make of it.
  YAML::Node value = node_[std::string(key)];
  if (value.IsDefined() && !value.IsNull() && !value.IsScalar()) {
    return Error(key, "expected a string, got a collection");
  }
  return Get(key, required, "a string", out);
}

Status YamlMap::Required(std::string_view key, std::string* out) const {
  return GetString(key, true, out);
}
Status YamlMap::Required(std::string_view key, double* out) const {
  return Get(key, true, "a number", out);
}
Status YamlMap::Required(std::string_view key, double* out,
                         const NumberRange& range) const {
  MIGSERVE_RETURN_IF_ERROR(Get(key, true, "a number", out));
  return InRange(key, *out, range);
}
Status YamlMap::Optional(std::string_view key, double* out,
                         const NumberRange& range) const {
  return Has(key) ? Required(key, out, range) : Status::Ok();
}
Status YamlMap::InRange(std::string_view key, double value,
                        const NumberRange& range) const {
  std::string problem = OutOfRange(value, range);
  return problem.empty() ? Status::Ok() : Error(key, problem);
}
Status YamlMap::Required(std::string_view key, int* out) const {
  return Get(key, true, "an integer", out);
}
Status YamlMap::Optional(std::string_view key, std::string* out) const {
  return GetString(key, false, out);
}
Status YamlMap::Optional(std::string_view key, double* out) const {
  return Get(key, false, "a number", out);
}
Status YamlMap::Optional(std::string_view key, int* out) const {
  return Get(key, false, "an integer", out);
}
Status YamlMap::Optional(std::string_view key, bool* out) const {
  return Get(key, false, "true or false", out);
}
Status YamlMap::Optional(std::string_view key, std::vector<int>* out) const {
  return Get(key, false, "a list of integers", out);
}
Status YamlMap::Optional(std::string_view key,
                         std::vector<std::string>* out) const {
  return Get(key, false, "a list of strings", out);
}

StatusOr<std::vector<YAML::Node>> YamlMap::Sequence(std::string_view key,
                                                    bool required) const {
  YAML::Node value = node_[std::string(key)];
  if (!value.IsDefined() || value.IsNull()) {
    if (required) return Error(key, "missing");
    return std::vector<YAML::Node>();
  }
  if (!value.IsSequence()) return Error(key, "expected a list");
  std::vector<YAML::Node> out;
  for (const YAML::Node& item : value) out.push_back(item);
  return out;
}

Status YamlMap::CheckKeys(const std::vector<std::string_view>& allowed) const {
  for (const auto& entry : node_) {
    std::string key = entry.first.as<std::string>("");
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (!known) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: {}: unknown field (expected one of: {})", source_,
                      entry.first.Mark().line + 1, FieldPath(key),
                      fmt::join(allowed, ", ")));
    }
  }
  return Status::Ok();
}

}  // namespace migserve
