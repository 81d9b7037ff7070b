// Who partitions a node's GPUs: the DRA driver's ResourceSlices as it
// publishes them (static MIG devices, and under DynamicMIG devices that
// consume the GPU's counters) in the stand-in API server.
#include "kubernetes/partition/dra_check.h"

#include <gtest/gtest.h>

#include "kubernetes/cluster_model.h"
#include "kubernetes/testing/preflight_test.h"

namespace migserve::kubernetes {
namespace {

using Json = nlohmann::json;

class DraCheckTest : public PreflightTest {
 protected:
  // GPU 0 of `node` as the driver publishes it: the whole GPU and one 1g
  // device, which consumes the GPU's counters when `dynamic`.
  void Slice(const std::string& node, bool dynamic,
             const std::string& driver = "gpu.nvidia.com") {
    Json mig = {{"name", "gpu-0-mig-1g10gb-19-0"},
                {"attributes", {{"profile", {{"string", "1g.10gb"}}}}}};
    if (dynamic) {
      mig["consumesCounters"] =
          Json::array({{{"counterSet", "gpu-0-counter-set"},
                        {"counters", {{"memory-slice-0", {{"value", "1"}}}}}}});
    }
    std::string name = node + "-" + driver + "-0";
    Json spec = {{"driver", driver},
                 {"nodeName", node},
                 {"pool", {{"name", node}}},
                 {"devices", Json::array({Json{{"name", "gpu-0"}}, mig})}};
    server_.Put("/apis/resource.k8s.io/v1/resourceslices/" + name,
                {{"metadata", {{"name", name}}}, {"spec", spec}});
  }

  std::vector<std::string> Problems(Partitioner partitioner) {
    return ProblemsOf(CheckDra(client_.get(), partitioner));
  }
};

TEST_F(DraCheckTest, TheAgentRefusesANodeTheDriverPartitions) {
  Slice("static", false);
  Slice("dynamic", true);
  Slice("other", true, "other.example.com");
  EXPECT_TRUE(CheckAgentMayPartition(client_.get(), "static").ok());
  EXPECT_TRUE(CheckAgentMayPartition(client_.get(), "other").ok());
  EXPECT_TRUE(CheckAgentMayPartition(client_.get(), "no-slices").ok());
  Status refused = CheckAgentMayPartition(client_.get(), "dynamic");
  EXPECT_EQ(refused.code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(refused.message(),
            "node dynamic: NVIDIA's DRA driver partitions its GPUs itself "
            "(DynamicMIG: ResourceSlice dynamic-gpu.nvidia.com-0 announces "
            "MIG devices that consume the GPU's counters); the agent and the "
            "driver would each destroy the other's instances, so the agent "
            "does not run here: keep one of them on the node "
            "(docs/kubernetes.md, \"Choosing who partitions the GPUs\")");
  auto nodes = ReadDraNodes(client_.get());
  ASSERT_TRUE(nodes.ok());
  EXPECT_TRUE(nodes->api);
  EXPECT_EQ(nodes->driver.size(), 2u);
  EXPECT_EQ(nodes->dynamic.size(), 1u);
  EXPECT_EQ(nodes->dynamic.count("dynamic"), 1u);
}

// What the cluster says is read leniently: fields of other types are
// absent, never a crash.
TEST_F(DraCheckTest, OddSlicesAreReadAsAbsentFields) {
  server_.Put("/apis/resource.k8s.io/v1/resourceslices/odd",
              {{"metadata", {{"name", 1}}},
               {"spec",
                {{"driver", "gpu.nvidia.com"},
                 {"nodeName", "n"},
                 {"devices", Json::array({3, Json{{"name", 4}},
                                          Json{{"name", "gpu-0-mig-x"},
                                               {"consumesCounters", 5}}})}}}});
  server_.Put("/apis/resource.k8s.io/v1/resourceslices/odder",
              {{"spec", {{"driver", 7}, {"devices", "x"}}}});
  auto nodes = ReadDraNodes(client_.get());
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  EXPECT_EQ(nodes->driver.size(), 1u);
  EXPECT_TRUE(nodes->dynamic.empty());
  EXPECT_TRUE(CheckAgentMayPartition(client_.get(), "n").ok());
}

TEST_F(DraCheckTest, DoctorNamesWhatTheChosenPartitionerLacks) {
  ASSERT_EQ(Problems(Partitioner::kDra),
            std::vector<std::string>{
                "no ResourceSlice of NVIDIA's DRA driver (gpu.nvidia.com): "
                "install it (the GPU Operator's DRA mode or the driver's Helm "
                "chart)"});
  EXPECT_TRUE(Problems(Partitioner::kAgent).empty());
  Slice("static", false);
  Slice("dynamic", true);
  std::vector<std::string> dra = Problems(Partitioner::kDra);
  ASSERT_EQ(dra.size(), 2u);
  EXPECT_EQ(dra[0],
            "node static: the DRA driver publishes no partitionable MIG "
            "device (ResourceSlice static-gpu.nvidia.com-0): turn on the "
            "driver's DynamicMIG feature gate (alpha, off by default) and, "
            "before Kubernetes 1.36, DRAPartitionableDevices on the API "
            "server, scheduler and kubelet");
  EXPECT_EQ(dra[1].rfind("no DeviceClass mig.nvidia.com (", 0), 0u) << dra[1];
  server_.Put("/apis/resource.k8s.io/v1/deviceclasses/mig.nvidia.com",
              {{"metadata", {{"name", "mig.nvidia.com"}}}});
  EXPECT_EQ(Problems(Partitioner::kDra).size(), 1u);
  std::vector<std::string> agent = Problems(Partitioner::kAgent);
  ASSERT_EQ(agent.size(), 1u);
  EXPECT_EQ(agent[0],
            "node dynamic: NVIDIA's DRA driver partitions its GPUs "
            "(DynamicMIG, ResourceSlice dynamic-gpu.nvidia.com-0), so the "
            "migserve agent and the driver would destroy each other's "
            "instances: turn DynamicMIG off there or keep the migserve agent "
            "off the node");
  EXPECT_NE(Problems(Partitioner::kGpuOperator)[0].find(
                "the GPU Operator's MIG manager and the driver"),
            std::string::npos);
}

}  // namespace
}  // namespace migserve::kubernetes
