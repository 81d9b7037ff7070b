#include "queueing/router_kind.h"

#include "util/kind_registry.h"

namespace migserve::queueing {
namespace {

KindRegistry<RouterTraits>& Kinds() {
  static auto* registry = new KindRegistry<RouterTraits>(  // never destroyed
      "router kind", {
                         {"proxy", Spreading::kRotation, Dispatch::kProxies,
                          DataPlane::kProxy},
                         {"gateway-api", Spreading::kThinning,
                          Dispatch::kGroupThenReplica, DataPlane::kGatewayOnly},
                         {"random", Spreading::kThinning, Dispatch::kReplica,
                          DataPlane::kGatewayOnly},
                     });
  return *registry;
}

}  // namespace

RouterKind::RouterKind() = default;

const RouterTraits& RouterKind::traits() const { return Kinds().At(index_); }

std::optional<RouterKind> ParseRouter(std::string_view name) {
  int index = Kinds().Find(name);
  if (index < 0) return std::nullopt;
  return RouterKind(index);
}

std::vector<std::string> RouterNames() { return Kinds().Names(); }

std::string RouterChoices() { return Kinds().Choices(); }

StatusOr<RouterKind> RegisterRouterKind(RouterTraits traits) {
  MIGSERVE_ASSIGN_OR_RETURN(int index, Kinds().Add(std::move(traits)));
  return RouterKind(index);
}

}  // namespace migserve::queueing
