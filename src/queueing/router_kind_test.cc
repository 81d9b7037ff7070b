#include "queueing/router_kind.h"

#include <gtest/gtest.h>

#include "queueing/traffic.h"
#include "util/registry_freeze.h"

namespace migserve::queueing {
namespace {

TEST(RouterKindTest, TheBuiltInKindsInOrder) {
  EXPECT_EQ(RouterKind().name(), "proxy");
  EXPECT_EQ(RouterName(*ParseRouter("gateway-api")), "gateway-api");
  EXPECT_FALSE(ParseRouter("nginx"));
  EXPECT_LT(RouterKind(), *ParseRouter("gateway-api"));
  EXPECT_LT(*ParseRouter("gateway-api"), *ParseRouter("random"));
  const RouterTraits& proxy = RouterKind().traits();
  EXPECT_EQ(proxy.spreading, Spreading::kRotation);
  EXPECT_EQ(proxy.dispatch, Dispatch::kProxies);
  EXPECT_EQ(proxy.plane, DataPlane::kProxy);
  const RouterTraits& random = ParseRouter("random")->traits();
  EXPECT_EQ(random.spreading, Spreading::kThinning);
  EXPECT_EQ(random.dispatch, Dispatch::kReplica);
  EXPECT_EQ(random.plane, DataPlane::kGatewayOnly);
}

// While a command runs (the CLI holds a FreezeRegistries around each) the
// registries take no kind, naming it, and lookups go on without the lock;
// between commands a test registers as before.
TEST(RouterKindTest, NoKindIsRegisteredWhileTheKindsAreFrozen) {
  {
    FreezeRegistries frozen;
    StatusOr<RouterKind> late = RegisterRouterKind({"late-toy"});
    ASSERT_FALSE(late.ok());
    EXPECT_EQ(late.status().code(), Status::Code::kFailedPrecondition);
    EXPECT_EQ(late.status().message(),
              "router kind 'late-toy': registered while a command runs; "
              "register kinds before it starts");
    EXPECT_EQ(ParseRouter("proxy"), RouterKind());
    EXPECT_EQ(RouterName(*ParseRouter("random")), "random");
    EXPECT_EQ(RouterNames().front(), "proxy");
  }
  EXPECT_FALSE(ParseRouter("late-toy").has_value());
  EXPECT_TRUE(RegisterRouterKind({"late-toy"}).ok());
}

// A kind registered once is found by name, listed last, and shapes the
// arrivals by its spreading; its name cannot be taken again.
TEST(RouterKindTest, ARegisteredKindIsOneOfThem) {
  auto kind = RegisterRouterKind({"rotating-toy", Spreading::kRotation,
                                  Dispatch::kReplica, DataPlane::kGatewayOnly});
  ASSERT_TRUE(kind.ok()) << kind.status().ToString();
  EXPECT_EQ(ParseRouter("rotating-toy"), *kind);
  EXPECT_EQ(RouterNames().back(), "rotating-toy");
  EXPECT_EQ(RouterChoices().substr(RouterChoices().rfind(' ') + 1),
            "rotating-toy");
  EXPECT_LT(*ParseRouter("random"), *kind);
  Traffic traffic{
      .service_rate = 100, .cv = 2, .router = *kind, .router_replicas = 3};
  Traffic proxy = traffic;
  proxy.router = RouterKind();
  EXPECT_EQ(ShapeAt(traffic, 10), ShapeAt(proxy, 10));
  EXPECT_EQ(ShapeAt(traffic, 10), (ArrivalShape{2, 1, 3, 10}));

  auto again = RegisterRouterKind({"rotating-toy"});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(),
            "router kind 'rotating-toy' is registered already");
  EXPECT_FALSE(RegisterRouterKind({""}).ok());
}

}  // namespace
}  // namespace migserve::queueing
