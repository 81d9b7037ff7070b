// The registry every named kind of the project keeps its entries in
// (queueing/router_kind.h, workload/service_kind.h): traits by name, in the
// order they were registered, each kept at one address for the life of the
// process, so that a handle (an index) and a reference to its traits stay
// good while kinds are added. Lookups are locked: a registration may come
// late, though a kind a reader has not seen yet is unknown to it.
#ifndef MIGSERVE_UTIL_KIND_REGISTRY_H_
#define MIGSERVE_UTIL_KIND_REGISTRY_H_

#include <fmt/format.h>

#include <deque>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "util/mutex.h"
#include "util/status_or.h"

namespace migserve {

// Traits: a struct with a `std::string name` member.
template <typename Traits>
class KindRegistry {
 public:
  // `what` names the kinds in messages ("router kind").
  KindRegistry(std::string what, std::initializer_list<Traits> kinds)
      : what_(std::move(what)), kinds_(kinds) {}

  // The index of the kind named `name`, or -1.
  int Find(std::string_view name) const {
    MutexLock lock(&mu_);
    return FindLocked(name);
  }
  // The traits of kind `index`. REQUIRES: an index Find or Add gave.
  const Traits& At(int index) const {
    MutexLock lock(&mu_);
    return kinds_[static_cast<size_t>(index)];
  }
  // Every kind's name in order of registration.
  std::vector<std::string> Names() const {
    MutexLock lock(&mu_);
    std::vector<std::string> names;
    for (const Traits& kind : kinds_) names.push_back(kind.name);
    return names;
  }
  // The names as "a, b or c", for messages.
  std::string Choices() const {
    std::vector<std::string> names = Names();
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
      out += names[i];
    }
    return out;
  }
  // Adds a kind and returns its index; InvalidArgument if its name is empty
  // or taken.
  StatusOr<int> Add(Traits traits) {
    if (traits.name.empty()) {
      return Status::InvalidArgument(fmt::format("a {} needs a name", what_));
    }
    MutexLock lock(&mu_);
    if (FindLocked(traits.name) >= 0) {
      return Status::InvalidArgument(
          fmt::format("{} '{}' is registered already", what_, traits.name));
    }
    kinds_.push_back(std::move(traits));
    return static_cast<int>(kinds_.size() - 1);
  }

 private:
  int FindLocked(std::string_view name) const REQUIRES(mu_) {
    for (size_t i = 0; i < kinds_.size(); ++i) {
      if (kinds_[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

  const std::string what_;
  mutable Mutex mu_;
  // A deque: a kind's traits never move as kinds are added.
  std::deque<Traits> kinds_ GUARDED_BY(mu_);
};

}  // namespace migserve

#endif  // MIGSERVE_UTIL_KIND_REGISTRY_H_
