#include "cluster/cluster_state.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "deployment/deployment_json.h"
#include "mig/gpu_catalog.h"

namespace migserve::cluster {
namespace {

const mig::GpuModel& Model(const char* name) {
  return *mig::GpuCatalog::Default().Find(name).value();
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
  ClusterState state = ClusterFromDeployment(d, {8, 16}).value();
  ASSERT_EQ(state.gpus.size(), 16u);
  // node-0/0..7, then node-1/0 and node-1/1 (GPU 9), ..., then x/0.
  EXPECT_EQ(state.gpus.back().id, (GpuId{"x", 0}));
  ASSERT_NE(state.FindGpu({"node-1", 1}), nullptr);
  EXPECT_TRUE(state.FindGpu({"node-1", 1})->HasReplica());
  EXPECT_EQ(state.FindGpu({"node-1", 1})->model, &Model("A100-SXM4-80GB"));
  EXPECT_EQ(state.UsedGpus(), 1);
  EXPECT_DOUBLE_EQ(state.Capacity()["a"], 10);
  EXPECT_FALSE(state.Mixed());
  AddSpareGpus(3, 2, Model("H100-SXM5-80GB"), &state);
  ASSERT_NE(state.FindGpu({"spare-1", 0}), nullptr);
  EXPECT_EQ(state.FindGpu({"spare-1", 0})->model->name, "H100-SXM5-80GB");
  EXPECT_TRUE(state.Mixed());
}

// gpus_per_node = 0 used to divide by zero; now it is refused by name.
// What `observe` writes: each service at the credit its replicas have,
// a rate; credits that sum past the most a rate may be are refused.
TEST(ClusterStateTest, ObservedServicesSumTheirReplicasCreditsAsARate) {
  auto Instances = [](double credit) {
    return fmt::format(
        R"([{{"id": 0, "instances": [
        {{"profile": "4g.40gb", "start": 0, "service": "a", "throughput": {0}}},
        {{"profile": "3g.40gb", "start": 4, "service": "a", "throughput": {0}}}
        ]}}])",
        credit);
  };
  ClusterState state = ClusterFromDeployment(Parse(Instances(10)), {}).value();
  std::vector<workload::Service> services = ObservedServices(state).value();
  ASSERT_EQ(services.size(), 1u);
  EXPECT_EQ(services[0].name, "a");
  EXPECT_EQ(services[0].throughput.value(), 20);
  state = ClusterFromDeployment(Parse(Instances(6e8)), {}).value();
  EXPECT_EQ(ObservedServices(state).status().message(),
            "service 'a': its replicas' credits: rate (req/s) must be from 0 "
            "to 1e+09, got 1200000000");
}

TEST(ClusterStateTest, PlacementOptionsAreValidated) {
  auto d = Parse(R"([{"id": 0, "instances": []}])");
  auto bad = ClusterFromDeployment(d, {0, 0});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "gpus_per_node: must be >= 1, got 0");
  EXPECT_FALSE(ClusterFromDeployment(d, {8, -1}).ok());
  EXPECT_TRUE(ClusterFromDeployment(d, {8, 0}).ok());
}

TEST(ClusterStateTest, PlacedGpusKeepTheirIdentityAndModel) {
  auto d = Parse(R"([
      {"id": 0, "node": "gpu-a1", "index": 3, "instances": [
        {"profile": "3g.40gb", "start": 4, "service": "a", "throughput": 5}]},
      {"id": 1, "node": "gpu-h1", "index": 0, "gpu": "H100-SXM5-80GB",
       "instances": [{"profile": "7g.80gb", "start": 0}]},
      {"id": 7, "node": "old", "instances": []},
      {"id": 2, "node": "old", "instances": []}])");
  ClusterState state = ClusterFromDeployment(d, {}).value();
  EXPECT_EQ(state.FindGpu({"gpu-a1", 3})->model->name, "A100-SXM4-80GB");
  EXPECT_EQ(state.FindGpu({"gpu-h1", 0})->model->name, "H100-SXM5-80GB");
  // No index: the rank of the id among the node's GPUs.
  EXPECT_NE(state.FindGpu({"old", 0}), nullptr);
  EXPECT_NE(state.FindGpu({"old", 1}), nullptr);
  EXPECT_TRUE(state.Mixed());
  deployment::Deployment back = ToDeployment(state, {});
  ASSERT_EQ(back.gpus.size(), 4u);
  EXPECT_EQ(back.gpus[0].node, "gpu-a1");
  EXPECT_EQ(back.gpus[0].index, 3);
  EXPECT_EQ(back.gpus[0].gpu, "A100-SXM4-80GB");
  EXPECT_EQ(back.gpus[1].gpu, "H100-SXM5-80GB");
  EXPECT_TRUE(back.Placed());
}

TEST(ClusterStateTest, RejectsDuplicateIdentitiesUnknownModelsAndBadLayouts) {
  auto twice = ClusterFromDeployment(
      Parse(R"([{"id": 0, "instances": []}, {"id": 0, "instances": []}])"), {});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "d.json: gpus[1]: GPU node-0/0 is listed twice");
  auto same = ClusterFromDeployment(
      Parse(R"([{"id": 0, "node": "n", "index": 2, "instances": []},
                {"id": 1, "node": "n", "index": 2, "instances": []}])"),
      {});
  EXPECT_EQ(same.status().message(),
            "d.json: gpus[1]: GPU n/2 is listed twice");
  auto unknown = ClusterFromDeployment(
      Parse(R"([{"id": 0, "gpu": "T4", "instances": []}])"), {});
  EXPECT_NE(unknown.status().message().find("d.json: gpus[0].gpu: unknown "
                                            "GPU 'T4'"),
            std::string::npos);
  auto wrong_model = ClusterFromDeployment(
      Parse(R"([{"id": 0, "gpu": "A30-24GB", "instances": [
                 {"profile": "3g.40gb", "start": 0}]}])"),
      {});
  EXPECT_EQ(wrong_model.status().message(),
            "d.json: gpus[0].instances[0].profile: A30-24GB has no profile "
            "3g.40gb");
  auto overlap = ClusterFromDeployment(
      Parse(R"([{"id": 0, "instances": [{"profile": "4g.40gb", "start": 0},
                                        {"profile": "2g.20gb", "start": 2}]}])"),
      {});
  ASSERT_FALSE(overlap.ok());
  EXPECT_NE(overlap.status().message().find("illegal layout"),
            std::string::npos);
}

TEST(GpuIdTest, ParsesNodeSlashIndex) {
  EXPECT_EQ(ParseGpuId("gpu-a1/3"), (GpuId{"gpu-a1", 3}));
  EXPECT_EQ(ParseGpuId("a/b/12"), (GpuId{"a/b", 12}));
  EXPECT_EQ(ParseGpuId("gpu-a1/"), std::nullopt);
  EXPECT_EQ(ParseGpuId("/3"), std::nullopt);
  EXPECT_EQ(ParseGpuId("n/-1"), std::nullopt);
  EXPECT_EQ(ParseGpuId("n/3x"), std::nullopt);
  EXPECT_EQ((GpuId{"n", 4}).ToString(), "n/4");
  EXPECT_EQ(UnplacedGpuId(13, 8), (GpuId{"node-1", 5}));
}

}  // namespace
}  // namespace migserve::cluster
