// Names from outside as values that can only be made by checking them
// (docs/design.md, "The boundary"): whatever writes nginx.conf or a
// Kubernetes object takes these, never a string, so no name that skipped
// its rule (util/plain_name.h's) can reach what migserve writes.
#ifndef MIGSERVE_BOUNDARY_CHECKED_NAME_H_
#define MIGSERVE_BOUNDARY_CHECKED_NAME_H_

#include <compare>
#include <string>
#include <string_view>
#include <utility>

#include "boundary/plain_name.h"
#include "util/status_or.h"

namespace migserve {

// A name that passed Rule::Problem ("" when it is fine); Rule::kWhat says
// what it names in an error. No default value: there is no unchecked one.
template <typename Rule>
class CheckedName {
 public:
  // Returns the name, or InvalidArgument: "<what> <why>".
  static StatusOr<CheckedName> Parse(std::string_view text) {
    std::string problem = Rule::Problem(text);
    if (!problem.empty()) {
      return Status::InvalidArgument(std::string(Rule::kWhat) + " " + problem);
    }
    return CheckedName(std::string(text));
  }

  // "" if `text` would be taken, else why not (without kWhat).
  static std::string Problem(std::string_view text) {
    return Rule::Problem(text);
  }

  const std::string& str() const { return name_; }
  auto operator<=>(const CheckedName&) const = default;
  bool operator==(const CheckedName&) const = default;

 private:
  explicit CheckedName(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

struct ServiceNameRule {
  static constexpr char kWhat[] = "service name";
  static std::string Problem(std::string_view s) { return PlainNameProblem(s); }
};
struct ModelNameRule {
  static constexpr char kWhat[] = "model name";
  static std::string Problem(std::string_view s) { return PlainNameProblem(s); }
};
struct ServedNameRule {
  static constexpr char kWhat[] = "served model name";
  static std::string Problem(std::string_view s) {
    return ServedNameProblem(s);
  }
};
struct ObjectNameRule {
  static constexpr char kWhat[] = "object name";
  static std::string Problem(std::string_view s) {
    return ObjectNameProblem(s);
  }
};

// A path or token an operator's flag puts in a configuration file (a run
// directory, a module's path): nothing a configuration's syntax reads.
struct ConfigWordRule {
  static constexpr char kWhat[] = "value";
  static std::string Problem(std::string_view s);
};

// A service's name: a plain name (label value, upstream, location, path).
using ServiceName = CheckedName<ServiceNameRule>;
// A DNN or language model's name: a plain name.
using ModelName = CheckedName<ModelNameRule>;
// A name a language model's replicas answer to (IsServedName): a service,
// its model, or one of the model's aliases (a Hugging Face id).
using ServedName = CheckedName<ServedNameRule>;
// A Kubernetes object's name (RFC 1123 subdomain).
using ObjectName = CheckedName<ObjectNameRule>;
// Up to 4096 characters, none of them whitespace, a control character or
// one of ; { } " ' $ # \ (empty is allowed: "none").
using ConfigWord = CheckedName<ConfigWordRule>;

// The DNS label of `text` (DnsLabel) as an object name: always one.
ObjectName ObjectLabel(std::string_view text);

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_CHECKED_NAME_H_
