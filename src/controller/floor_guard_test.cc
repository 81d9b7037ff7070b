#include "controller/floor_guard.h"

#include <gtest/gtest.h>

#include "deployment/testing/shipped.h"

namespace migserve::controller {
namespace {

// A delete of one of bert-1's replicas on the night cluster, and its floor
// of 1,000 req/s.
struct RoutedCase {
  cluster::ClusterState seen = cluster::ClusterFromDeployment(
                                   testing::ShippedDeployment("night"), {8, 24})
                                   .value();
  cluster::Action remove;
  TransitionGoal goal{{{"bert-1", 1000}}, {{"bert-1", 1000}}, 0, {}};
  std::map<std::string, double> capacity = seen.Capacity();

  RoutedCase() {
    for (const cluster::GpuState& g : seen.gpus) {
      for (const cluster::Slot& s : g.slots) {
        if (s.replica && s.replica->service == "bert-1") {
          remove = {7,  cluster::ActionKind::kDelete,
                    {}, {g.id, g.model, s.instance},
                    {}, *s.replica,
                    {}, {}};
        }
      }
    }
  }
};

// What the route carries once the delete starts is judged, not the ready
// capacity (issue 91): below the floor is refused, naming both; a route's
// integer weights may put it a ten-thousandth below and pass.
TEST(FloorGuardTest, ARemovalIsJudgedOnWhatItsRouteCarries) {
  RoutedCase c;
  ASSERT_GT(c.capacity["bert-1"], 1500);
  Status below =
      CheckRoutedFloor(c.remove, c.seen, 999, c.capacity, c.goal, c.goal);
  EXPECT_EQ(below.code(), Status::Code::kUnavailable);
  EXPECT_NE(below.message().find("action 7 (delete of bert-1) would leave "
                                 "bert-1 routed at 999 req/s"),
            std::string::npos)
      << below.message();
  EXPECT_TRUE(
      CheckRoutedFloor(c.remove, c.seen, 999.95, c.capacity, c.goal, c.goal)
          .ok());
  EXPECT_TRUE(
      CheckRoutedFloor(c.remove, c.seen, 1000, c.capacity, c.goal, c.goal)
          .ok());
  // A create removes nothing: its route is not judged.
  cluster::Action create = c.remove;
  create.kind = cluster::ActionKind::kCreate;
  EXPECT_TRUE(
      CheckRoutedFloor(create, c.seen, 0, c.capacity, c.goal, c.goal).ok());
}

}  // namespace
}  // namespace migserve::controller
