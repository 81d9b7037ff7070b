#include "serving/request_router.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace migserve::serving {
namespace {

TEST(RequestRouterTest, NamesArePolicies) {
  EXPECT_EQ(ParseRoutingPolicy("weighted"), RoutingPolicy::kWeighted);
  EXPECT_EQ(ParseRoutingPolicy("round-robin"), RoutingPolicy::kRoundRobin);
  EXPECT_EQ(ParseRoutingPolicy("least-outstanding"),
            RoutingPolicy::kLeastOutstanding);
  EXPECT_EQ(ParseRoutingPolicy("proxy"), RoutingPolicy::kProxies);
  EXPECT_EQ(ParseRoutingPolicy("gateway-api"),
            RoutingPolicy::kGroupThenReplica);
  EXPECT_EQ(ParseRoutingPolicy("random"), RoutingPolicy::kReplica);
  EXPECT_EQ(PolicyOf(*queueing::ParseRouter("gateway-api")),
            RoutingPolicy::kGroupThenReplica);
  EXPECT_FALSE(ParseRoutingPolicy("smooth"));
  EXPECT_EQ(
      RoutingPolicyNames(),
      (std::vector<std::string>{"proxy", "gateway-api", "random", "weighted",
                                "round-robin", "least-outstanding"}));
}

// Weights 1 and 3 over a group of one replica and a group of three: every
// replica gets a quarter, each at evenly spread turns.
TEST(RequestRouterTest, WeightedSplitsByGroupWeightThenInTurn) {
  RequestRouter router(RoutingPolicy::kWeighted, {{0}, {1, 2, 3}, {}},
                       {1, 3, 5});
  std::map<int, int> count;
  std::vector<int> turns_of_0;
  for (int i = 0; i < 400; ++i) {
    int r = router.Pick(i, nullptr);
    ++count[r];
    if (r == 0) turns_of_0.push_back(i);
  }
  EXPECT_EQ(count,
            (std::map<int, int>{{0, 100}, {1, 100}, {2, 100}, {3, 100}}));
  for (size_t k = 1; k < turns_of_0.size(); ++k) {
    EXPECT_EQ(turns_of_0[k] - turns_of_0[k - 1], 4);
  }
}

TEST(RequestRouterTest, RoundRobinIgnoresWeights) {
  RequestRouter router(RoutingPolicy::kRoundRobin, {{0, 1, 2}}, {1});
  std::vector<int> picks;
  for (int i = 0; i < 6; ++i) picks.push_back(router.Pick(i, nullptr));
  EXPECT_EQ(picks, (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

class Discard : public queueing::BatchSink {
 public:
  void Served(const double*, int, double) override {}
};

TEST(RequestRouterTest, LeastOutstandingPicksTheLeastBusyReplica) {
  Discard sink;
  queueing::BatchCurve curve({{1, 100}});
  std::vector<queueing::ReplicaQueue> queues;
  for (int i = 0; i < 2; ++i)
    queues.emplace_back(curve, queueing::BatcherConfig{}, &sink);
  RequestRouter router(RoutingPolicy::kLeastOutstanding, {{0, 1}}, {1});
  EXPECT_EQ(router.Pick(0, &queues), 0);
  queues[0].Arrive(0);
  queues[0].Arrive(0);
  EXPECT_EQ(router.Pick(0.01, &queues), 1);
  queues[1].Arrive(0.01);
  // At 0.15 replica 0 has one left, replica 1 none.
  EXPECT_EQ(router.Pick(0.15, &queues), 1);
  queues[1].Arrive(0.15);
  queues[1].Arrive(0.15);
  EXPECT_EQ(router.Pick(0.16, &queues), 0);
}

}  // namespace
}  // namespace migserve::serving
