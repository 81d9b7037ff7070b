// Labels, annotations and label selectors as values that can only hold what
// the API server takes (docs/design.md, "The boundary"): every object
// migserve writes gets its labels and annotations from these, so no key
// that is not a constant of the code and no label value that skipped its
// check reaches a manifest, a request or a selector.
#ifndef MIGSERVE_KUBE_LABELS_H_
#define MIGSERVE_KUBE_LABELS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "boundary/checked_name.h"
#include "boundary/plain_name.h"
#include "util/status_or.h"

namespace migserve::kube {

// Whether `key` is a Kubernetes label or annotation key: an optional
// prefix (a DNS subdomain of at most 253 characters) and '/', then a name
// of 1 to 63 letters, digits, '-', '_' or '.', alphanumeric at both ends.
constexpr bool IsQualifiedName(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsPlainName(key);
  return IsObjectName(key.substr(0, slash)) &&
         IsPlainName(key.substr(slash + 1));
}

// A label or annotation key: only a constant of the code, checked when it
// is compiled (a key that is not one does not compile).
class LabelKey {
 public:
  consteval LabelKey(const char* key)  // NOLINT(google-explicit-constructor)
      : key_(key) {
    if (!IsQualifiedName(key_)) throw "not a Kubernetes label key";
  }
  std::string_view str() const { return key_; }

 private:
  const char* key_;
};

// A label value: what a plain name is (boundary/plain_name.h), 1 to 63
// letters, digits, '-', '_' or '.', alphanumeric at both ends.
struct LabelValueRule {
  static constexpr char kWhat[] = "label value";
  static std::string Problem(std::string_view s) { return PlainNameProblem(s); }
};
using LabelValue = CheckedName<LabelValueRule>;

// Returns `text` as a label value, or InvalidArgument naming `what` (the
// node of GPU n/0, say) and the rule.
StatusOr<LabelValue> ParseLabelValue(std::string_view text,
                                     std::string_view what);

// An object's labels, in the order they were set (a key set again keeps
// its place).
class Labels {
 public:
  Labels& Set(LabelKey key, LabelValue value);
  nlohmann::ordered_json ToJson() const;
  const std::vector<std::pair<std::string_view, LabelValue>>& items() const {
    return items_;
  }

 private:
  std::vector<std::pair<std::string_view, LabelValue>> items_;
};

// Key `key`-`index` (migserve.io/mig-request-0): a constant and a whole
// number, one key per GPU of a node, say. Aborts if that is no key (a
// negative index, or a constant whose name part leaves no room for it):
// a fault of the code, not of its input.
std::string IndexedKey(LabelKey key, int index);

// An object's annotations, in the order they were set. An annotation's
// value may be any text; its key is a constant, or a constant and an
// index.
class Annotations {
 public:
  Annotations& Set(LabelKey key, std::string value);
  Annotations& SetIndexed(LabelKey key, int index, std::string value);
  bool empty() const { return items_.empty(); }
  nlohmann::ordered_json ToJson() const;
  // A merge patch that sets these annotations and changes nothing else.
  nlohmann::json Patch() const;

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// A label selector (the labelSelector of a list or watch), built from
// checked values only.
class LabelSelector {
 public:
  // Every label of `labels`, as equalities.
  explicit LabelSelector(const Labels& labels = {});
  // Objects that carry label `key` (any value), or that lack it.
  LabelSelector& Has(LabelKey key);
  LabelSelector& Lacks(LabelKey key);
  // "a=b,!c" as the selector reads.
  const std::string& str() const { return text_; }
  // "labelSelector=<percent-encoded selector>", a list's query.
  std::string Query() const;

 private:
  void Add(std::string term);
  std::string text_;
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_LABELS_H_
