// The router kinds (docs/serving.md, "Router kinds"): what carries a
// service's requests to its replicas, named by a workload's `router`. This
// registry is the one place that knows them. A kind is its name and three
// facets, each read by the room that acts on it and never by comparing
// kinds:
//   spreading  the arrivals a replica's p99 credit assumes (ShapeAt,
//              traffic.h);
//   dispatch   how `serve` reproduces the router request by request
//              (serving/request_router.h);
//   plane      what export writes and the controller keeps on Kubernetes
//              beside a gateway's HTTPRoutes (cli/export_command.cc,
//              manager/manager.cc).
// Adding a kind that combines facets that exist is one RegisterRouterKind
// call; a new facet value (a capacity-aware dispatch, say) is one enum value
// here, and every switch over that facet fails to compile until it handles
// it.
#ifndef MIGSERVE_QUEUEING_ROUTER_KIND_H_
#define MIGSERVE_QUEUEING_ROUTER_KIND_H_

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status_or.h"

namespace migserve::queueing {

// How the requests one replica receives are taken from its service's
// stream.
enum class Spreading {
  // `router_replicas` proxies, each request reaching one at random, each
  // running smooth weighted round robin over every replica: a replica with a
  // share 1/k of the stream takes every k-th request of each proxy.
  kRotation,
  // An independent random pick per request: the replica's share, thinned at
  // random.
  kThinning,
};

// How `serve` picks the replica of each request.
enum class Dispatch {
  kProxies,           // a proxy at random, then its rotation over replicas
  kGroupThenReplica,  // a group at random by weight, then inside the group
  kReplica,           // a replica at random by weight
};

// What carries the routes on Kubernetes beside the HTTPRoutes, which are
// written for every kind whenever the serving spec names a gateway.
enum class DataPlane {
  kGatewayOnly,  // nothing more
  kProxy,        // migserve's proxy: proxy.yaml, the routes ConfigMap
};

struct RouterTraits {
  std::string name;  // a workload's `router`
  Spreading spreading = Spreading::kThinning;
  Dispatch dispatch = Dispatch::kReplica;
  DataPlane plane = DataPlane::kGatewayOnly;
};

// A registered router kind: a handle to its traits, which live as long as
// the process. Kinds order by registration: proxy, gateway-api, random,
// then any registered since.
class RouterKind {
 public:
  RouterKind();  // proxy, the default

  const RouterTraits& traits() const;
  std::string_view name() const { return traits().name; }

  friend bool operator==(RouterKind a, RouterKind b) {
    return a.index_ == b.index_;
  }
  friend std::strong_ordering operator<=>(RouterKind a, RouterKind b) {
    return a.index_ <=> b.index_;
  }

 private:
  friend std::optional<RouterKind> ParseRouter(std::string_view name);
  friend StatusOr<RouterKind> RegisterRouterKind(RouterTraits traits);
  explicit RouterKind(int index) : index_(index) {}

  int index_ = 0;
};

// Returns the kind of `name`, or nullopt.
std::optional<RouterKind> ParseRouter(std::string_view name);
// The name of `router` ("proxy", "gateway-api", "random", ...).
inline std::string_view RouterName(RouterKind router) { return router.name(); }
// Every kind's name in order: proxy, gateway-api, random, then the kinds
// registered since.
std::vector<std::string> RouterNames();
// The same as "proxy, gateway-api or random", for messages.
std::string RouterChoices();

// Adds a kind; InvalidArgument if the name is empty or taken,
// FailedPrecondition while a command runs (util/kind_registry.h: the
// registries are frozen then, their lookups unlocked).
StatusOr<RouterKind> RegisterRouterKind(RouterTraits traits);

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_ROUTER_KIND_H_
