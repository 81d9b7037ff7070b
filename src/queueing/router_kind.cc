#include "queueing/router_kind.h"

#include <fmt/format.h>

#include <deque>

#include "util/mutex.h"

namespace migserve::queueing {
namespace {

// The kinds by registration order. A deque: a kind's traits never move, so
// the reference traits() returns stays good while kinds are added.
struct Registry {
  Mutex mu;
  std::deque<RouterTraits> kinds GUARDED_BY(mu) = {
      {"proxy", Spreading::kRotation, Dispatch::kProxies, DataPlane::kProxy},
      {"gateway-api", Spreading::kThinning, Dispatch::kGroupThenReplica,
       DataPlane::kGatewayOnly},
      {"random", Spreading::kThinning, Dispatch::kReplica,
       DataPlane::kGatewayOnly},
  };
};

Registry& Kinds() {
  static Registry* registry = new Registry;  // never destroyed
  return *registry;
}

// The index of the kind named `name` in `r`, or -1.
int Find(const Registry& r, std::string_view name) REQUIRES(r.mu) {
  for (size_t i = 0; i < r.kinds.size(); ++i) {
    if (r.kinds[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

RouterKind::RouterKind() = default;

const RouterTraits& RouterKind::traits() const {
  Registry& r = Kinds();
  MutexLock lock(&r.mu);
  return r.kinds[index_];
}

std::optional<RouterKind> ParseRouter(std::string_view name) {
  Registry& r = Kinds();
  MutexLock lock(&r.mu);
  int index = Find(r, name);
  if (index < 0) return std::nullopt;
  return RouterKind(index);
}

std::vector<std::string> RouterNames() {
  Registry& r = Kinds();
  MutexLock lock(&r.mu);
  std::vector<std::string> names;
  for (const RouterTraits& kind : r.kinds) names.push_back(kind.name);
  return names;
}

std::string RouterChoices() {
  std::vector<std::string> names = RouterNames();
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

StatusOr<RouterKind> RegisterRouterKind(RouterTraits traits) {
  if (traits.name.empty()) {
    return Status::InvalidArgument("a router kind needs a name");
  }
  Registry& r = Kinds();
  MutexLock lock(&r.mu);
  if (Find(r, traits.name) >= 0) {
    return Status::InvalidArgument(
        fmt::format("router kind '{}' is registered already", traits.name));
  }
  r.kinds.push_back(std::move(traits));
  return RouterKind(static_cast<int>(r.kinds.size() - 1));
}

}  // namespace migserve::queueing
