#include "cluster/routing.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "deployment/deployment_json.h"
#include "util/test_util.h"

namespace migserve::cluster {
namespace {

ClusterState Cluster(const std::string& gpus) {
  auto d = deployment::ParseDeployment(
               R"({"gpu": "A100-SXM4-80GB", "gpus": )" + gpus + "}", "d.json")
               .value();
  return ClusterFromDeployment(d, {8, 0}).value();
}

TEST(RoutingTest, GroupsReplicasOfEqualCapacityAndWeighsByCapacity) {
  // Two 1g replicas at 10 req/s and one 3g at 40 req/s; another batch on a
  // 1g is a group of its own.
  ClusterState state = Cluster(R"([{"id": 0, "instances": [
      {"profile": "1g.10gb", "start": 0, "service": "a", "batch": 8,
       "throughput": 10},
      {"profile": "1g.10gb", "start": 1, "service": "a", "batch": 8,
       "throughput": 10},
      {"profile": "1g.10gb", "start": 2, "service": "a", "batch": 4,
       "throughput": 6},
      {"profile": "3g.40gb", "start": 4, "service": "a", "batch": 8,
       "throughput": 40}]}])");
  ServiceRoute route = RouteOf(state, "a");
  ASSERT_EQ(route.groups.size(), 3u);
  EXPECT_EQ(route.groups[0], (RouteGroup{"A100-SXM4-80GB",
                                         "1g.10gb",
                                         4,
                                         1,
                                         1,
                                         6,
                                         6000,
                                         {{{"node-0", 0}, 2}}}));
  EXPECT_EQ(route.groups[1],
            (RouteGroup{"A100-SXM4-80GB",
                        "1g.10gb",
                        8,
                        1,
                        2,
                        10,
                        20000,
                        {{{"node-0", 0}, 0}, {{"node-0", 0}, 1}}}));
  EXPECT_EQ(route.groups[2], (RouteGroup{"A100-SXM4-80GB",
                                         "3g.40gb",
                                         8,
                                         1,
                                         1,
                                         40,
                                         40000,
                                         {{{"node-0", 0}, 4}}}));
  // At 66 req/s each replica gets exactly its throughput.
  EXPECT_DOUBLE_EQ(RoutedCapacity(route), 66);
  EXPECT_DOUBLE_EQ(ReplicaLoad(route, route.groups[1], 33), 5);
  EXPECT_DOUBLE_EQ(ReplicaLoad(route, route.groups[2], 33), 20);
  EXPECT_EQ(Routes(state).at("a"), route);
  auto json = nlohmann::json::parse(FormatRoute(route));
  EXPECT_EQ(json["service"], "a");
  EXPECT_EQ(json["groups"][2]["profile"], "3g.40gb");
  EXPECT_EQ(json["groups"][2]["weight"], 40000);
}

TEST(RoutingTest, OneProfileWithTwoCreditsIsTwoGroups) {
  // Mid-transition: one replica with day's credit, two with night's (a
  // credit depends on the service's rate). As one group spread evenly the
  // three would carry 3 x 236 = 708 req/s; as two, their sum.
  ClusterState state = Cluster(R"([{"id": 0, "instances": [
      {"profile": "1g.10gb", "start": 0, "service": "a", "batch": 16,
       "throughput": 241.1},
      {"profile": "1g.10gb", "start": 1, "service": "a", "batch": 16,
       "throughput": 236},
      {"profile": "1g.10gb", "start": 2, "service": "a", "batch": 16,
       "throughput": 236}]}])");
  ServiceRoute route = RouteOf(state, "a");
  ASSERT_EQ(route.groups.size(), 2u);
  EXPECT_EQ(route.groups[0].replicas, 2);
  EXPECT_EQ(route.groups[0].weight, 472000);
  EXPECT_EQ(route.groups[1].replicas, 1);
  EXPECT_EQ(route.groups[1].weight, 241100);
  EXPECT_NEAR(RoutedCapacity(route), 713.1, 1e-9);
  // The groups differ in credit alone, and that keeps them apart wherever a
  // replica's group is looked up (`serve`, Service names).
  EXPECT_FALSE(SameGroup(route.groups[0], route.groups[1]));
  RouteGroup day = route.groups[1];
  day.replicas = 7;
  day.weight = 1;
  day.members.clear();
  EXPECT_TRUE(SameGroup(day, route.groups[1]));
  day.credit = 241.1004;  // below a thousandth of a request per second
  EXPECT_TRUE(SameGroup(day, route.groups[1]));
}

TEST(RoutingTest, AGroupWithWeightAndNoReplicaCarriesNothing) {
  ServiceRoute route{"a",
                     {{"A100-SXM4-80GB", "1g.10gb", 8, 1, 2, 10, 20000, {}},
                      {"A100-SXM4-80GB", "3g.40gb", 8, 1, 0, 40, 40000, {}}}};
  EXPECT_EQ(RoutedCapacity(route), 0);
  // More replicas than the weight assumed: each carries less.
  route.groups[1].replicas = 2;
  EXPECT_DOUBLE_EQ(RoutedCapacity(route), 60);
  EXPECT_DOUBLE_EQ(ReplicaLoad(route, route.groups[1], 60), 20);
  EXPECT_EQ(RoutedCapacity(ServiceRoute{"a", {}}), 0);
}

TEST(RoutingTest, LargeCapacitiesAreScaledBelowGatewayApisLimit) {
  ServiceRoute route{"a",
                     {{"H100-SXM5-80GB", "7g.80gb", 64, 1, 4, 1250, 0, {}},
                      {"H100-SXM5-80GB", "1g.10gb", 8, 1, 1, 0.25, 0, {}}}};
  WeighRoute(&route);
  EXPECT_EQ(route.groups[0].weight, kMaxRouteWeight);
  EXPECT_EQ(route.groups[1].weight, 50);
  EXPECT_NEAR(RoutedCapacity(route), 5000.25, 1e-9);
}

TEST(RoutingTest, WeightedRoutingKeepsEveryReplicaOfDayWithinCapacity) {
  auto day = deployment::LoadDeployment(
                 testing::SourcePath("data/deployments/day.json"))
                 .value();
  ClusterState state = ClusterFromDeployment(day, {8, 0}).value();
  std::map<std::string, ServiceRoute> routes = Routes(state);
  double worst_even = 0;
  for (const workload::Service& s : day.services) {
    const ServiceRoute& route = routes.at(s.name);
    double capacity = state.Capacity().at(s.name);
    // Integer weights lose at most a part in 10^4 of the capacity.
    EXPECT_NEAR(RoutedCapacity(route), capacity, capacity * 1e-4) << s.name;
    int replicas = 0;
    for (const RouteGroup& g : route.groups) replicas += g.replicas;
    for (const RouteGroup& g : route.groups) {
      EXPECT_LE(ReplicaLoad(route, g, s.throughput.value()),
                g.credit * (1 + 1e-4))
          << s.name;
      worst_even =
          std::max(worst_even, s.throughput.value() / replicas / g.credit);
    }
  }
  // An even split, as a plain Kubernetes Service does it, overloads
  // resnet101-1's 1g replica nearly threefold.
  EXPECT_NEAR(worst_even, 2.92, 0.01);
}

}  // namespace
}  // namespace migserve::cluster
