// A YAML mapping read field by field, with errors that name the file, line
// and field ("w.yaml:7: services[2].throughput: must be > 0"). The adapter
// that keeps yaml-cpp's exceptions out of the rest of the code.
#ifndef MIGSERVE_BOUNDARY_YAML_MAP_H_
#define MIGSERVE_BOUNDARY_YAML_MAP_H_

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "boundary/number.h"
#include "boundary/quantity.h"
#include "util/status_or.h"

namespace migserve {

// How deep a document may nest, and how many nodes a reader of it may
// visit with its aliases expanded: at least kMinYamlVisits, and twice the
// text's length in bytes.
inline constexpr int kMaxYamlDepth = 64;
inline constexpr long kMinYamlVisits = 100000;

// Parses `text`; returns InvalidArgument "source:line: reason" on a syntax
// error, a mapping that gives a key twice (naming both lines), nesting
// deeper than kMaxYamlDepth, or aliases that expand the document beyond
// its visit limit (a "billion laughs" is refused in milliseconds, not
// expanded until memory runs out).
StatusOr<YAML::Node> ParseYaml(const std::string& text,
                               const std::string& source);

class YamlMap {
 public:
  // Returns the mapping at `node`, or InvalidArgument naming `path` if
  // `node` is not a mapping. `path` names the node in messages
  // ("services[2]"); empty for the document root.
  static StatusOr<YamlMap> Open(const YAML::Node& node,
                                const std::string& source,
                                const std::string& path);

  // Each getter returns InvalidArgument naming the field if the value has
  // the wrong type; Required* also if it is absent. Optional* leave `out`
  // unchanged if the field is absent.
  Status Required(std::string_view key, std::string* out) const;
  Status Required(std::string_view key, double* out) const;
  Status Required(std::string_view key, int* out) const;
  Status Optional(std::string_view key, std::string* out) const;
  Status Optional(std::string_view key, double* out) const;
  Status Optional(std::string_view key, int* out) const;
  Status Optional(std::string_view key, bool* out) const;
  Status Optional(std::string_view key, std::vector<int>* out) const;
  Status Optional(std::string_view key, std::vector<std::string>* out) const;
  // A number (always finite: .inf and .nan are refused) within `range`
  // (boundary/number.h), named with the range if not.
  Status Required(std::string_view key, double* out,
                  const NumberRange& range) const;
  Status Optional(std::string_view key, double* out,
                  const NumberRange& range) const;
  // A checked quantity (boundary/quantity.h) within `range`, which lies
  // within its kind's.
  template <typename Rule>
  Status Required(std::string_view key, CheckedNumber<Rule>* out,
                  const NumberRange& range) const {
    double value = 0;
    MIGSERVE_RETURN_IF_ERROR(Required(key, &value, range));
    StatusOr<CheckedNumber<Rule>> checked = CheckedNumber<Rule>::Of(value);
    if (!checked.ok()) return Error(key, checked.status().message());
    *out = *checked;
    return Status::Ok();
  }

  // Returns the sequence under `key` (empty if absent), or InvalidArgument if
  // it is not a sequence.
  StatusOr<std::vector<YAML::Node>> Sequence(std::string_view key,
                                             bool required) const;

  // Returns the value under `key` (undefined if absent), for callers that
  // walk a nested structure themselves.
  YAML::Node Value(std::string_view key) const {
    return node_[std::string(key)];
  }

  // Returns true if `key` is present with a value (not null).
  bool Has(std::string_view key) const {
    YAML::Node value = node_[std::string(key)];
    return value.IsDefined() && !value.IsNull();
  }

  // Returns InvalidArgument naming the first key not in `allowed`.
  Status CheckKeys(const std::vector<std::string_view>& allowed) const;

  // Returns InvalidArgument "source:line: path.key: reason", with the line of
  // the field if present, else of the mapping.
  Status Error(std::string_view key, std::string_view reason) const;

  // Returns "path.key" (or "key" at the root).
  std::string FieldPath(std::string_view key) const;
  int line() const { return node_.Mark().line + 1; }
  const std::string& source() const { return source_; }

 private:
  YamlMap(YAML::Node node, std::string source, std::string path)
      : node_(std::move(node)),
        source_(std::move(source)),
        path_(std::move(path)) {}

  Status InRange(std::string_view key, double value,
                 const NumberRange& range) const;
  template <typename T>
  Status Get(std::string_view key, bool required, const char* type_name,
             T* out) const;
  // Get of a string, refusing a collection.
  Status GetString(std::string_view key, bool required, std::string* out) const;

  YAML::Node node_;
  std::string source_;
  std::string path_;
};

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_YAML_MAP_H_
