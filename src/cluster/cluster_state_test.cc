#include "cluster/cluster_state.h"

#include <gtest/gtest.h>

#include "deployment/deployment_json.h"
#include "mig/gpu_catalog.h"

namespace migserve::cluster {
namespace {

const mig::GpuModel& A100() {
  return *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
}

deployment::Deployment Parse(const std::string& gpus) {
  return deployment::ParseDeployment(
             R"({"gpu": "A100-SXM4-80GB", "gpus": )" + gpus + "}", "d.json")
      .value();
}

TEST(ClusterStateTest, PlacesUnplacedGpusOnNodesAndPads) {
  auto d = Parse(R"([{"id": 9, "instances": [
      {"profile": "7g.80gb", "start": 0, "service": "a", "throughput": 10}]},
      {"id": 1, "node": "x", "instances": []}])");
  ClusterState state = ClusterFromDeployment(d, A100(), {8, 16}).value();
  ASSERT_EQ(state.gpus.size(), 16u);
  EXPECT_EQ(state.gpus[0].id, 1);
  EXPECT_EQ(state.gpus[0].node, "x");
  EXPECT_EQ(state.FindGpu(9)->node, "node-1");
  EXPECT_EQ(state.gpus.back().id, 23);
  EXPECT_EQ(state.UsedGpus(), 1);
  EXPECT_DOUBLE_EQ(state.Capacity()["a"], 10);
  AddSpareGpus(3, 2, &state);
  EXPECT_EQ(state.gpus.back().id, 26);
  EXPECT_EQ(state.gpus.back().node, "spare-1");
}

TEST(ClusterStateTest, RejectsDuplicateIdsAndIllegalLayouts) {
  auto twice = ClusterFromDeployment(
      Parse(R"([{"id": 0, "instances": []}, {"id": 0, "instances": []}])"),
      A100(), {});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("d.json: gpus[1].id"),
            std::string::npos);
  auto overlap = ClusterFromDeployment(
      Parse(R"([{"id": 0, "instances": [{"profile": "4g.40gb", "start": 0},
                                        {"profile": "2g.20gb", "start": 2}]}])"),
      A100(), {});
  ASSERT_FALSE(overlap.ok());
  EXPECT_NE(overlap.status().message().find("illegal layout"),
            std::string::npos);
}

}  // namespace
}  // namespace migserve::cluster
