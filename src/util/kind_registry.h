// The registry every named kind of the project keeps its entries in
// (queueing/router_kind.h, workload/service_kind.h): traits by name, in the
// order they were registered, each kept at one address for the life of the
// process, so that a handle (an index) and a reference to its traits stay
// good while kinds are added. Kinds are registered before a command runs
// (at start-up, or by a test between commands); while one runs the
// registries are frozen (util/registry_freeze.h): a registration is
// refused, naming the kind, and lookups take no lock, since nothing can
// change what they read. Outside a freeze lookups are locked.
#ifndef MIGSERVE_UTIL_KIND_REGISTRY_H_
#define MIGSERVE_UTIL_KIND_REGISTRY_H_

#include <fmt/format.h>

#include <deque>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "util/mutex.h"
#include "util/registry_freeze.h"
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
    if (FreezeRegistries::Frozen()) return FindIn(Unchanging(), name);
    MutexLock lock(&mu_);
    return FindIn(kinds_, name);
  }
  // The traits of kind `index`. REQUIRES: an index Find or Add gave.
  const Traits& At(int index) const {
    if (FreezeRegistries::Frozen()) {
      return Unchanging()[static_cast<size_t>(index)];
    }
    MutexLock lock(&mu_);
    return kinds_[static_cast<size_t>(index)];
  }
  // Every kind's name in order of registration.
  std::vector<std::string> Names() const {
    if (FreezeRegistries::Frozen()) return NamesIn(Unchanging());
    MutexLock lock(&mu_);
    return NamesIn(kinds_);
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
  // or taken, FailedPrecondition while the registries are frozen.
  StatusOr<int> Add(Traits traits) {
    if (traits.name.empty()) {
      return Status::InvalidArgument(fmt::format("a {} needs a name", what_));
    }
    if (FreezeRegistries::Frozen()) {
      return Status::FailedPrecondition(fmt::format(
          "{} '{}': registered while a command runs; register kinds before "
          "it starts",
          what_, traits.name));
    }
    MutexLock lock(&mu_);
    if (FindIn(kinds_, traits.name) >= 0) {
      return Status::InvalidArgument(
          fmt::format("{} '{}' is registered already", what_, traits.name));
    }
    kinds_.push_back(std::move(traits));
    return static_cast<int>(kinds_.size() - 1);
  }

 private:
  static int FindIn(const std::deque<Traits>& kinds, std::string_view name) {
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }
  static std::vector<std::string> NamesIn(const std::deque<Traits>& kinds) {
    std::vector<std::string> names;
    for (const Traits& kind : kinds) names.push_back(kind.name);
    return names;
  }
  // The kinds, read without the lock: only while frozen, when no Add can
  // change them.
  const std::deque<Traits>& Unchanging() const NO_THREAD_SAFETY_ANALYSIS {
    return kinds_;
  }

  const std::string what_;
  mutable Mutex mu_;
  // A deque: a kind's traits never move as kinds are added.
  std::deque<Traits> kinds_ GUARDED_BY(mu_);
};

}  // namespace migserve

#endif  // MIGSERVE_UTIL_KIND_REGISTRY_H_
