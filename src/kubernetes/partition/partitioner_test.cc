#include "kubernetes/partition/partitioner.h"

#include <gtest/gtest.h>

#include <set>

#include "kubernetes/cluster_model.h"
#include "kubernetes/kubernetes_backend.h"

namespace migserve::kubernetes {
namespace {

using Names = std::vector<std::pair<std::string, Partitioner>>;

// One row per partitioner, with the names the flags have always taken.
TEST(PartitionerTest, OneRowPerPartitionerWithTheFlagsNames) {
  std::set<Partitioner> kinds;
  for (const PartitionerFacets& f : Partitioners()) {
    EXPECT_TRUE(kinds.insert(f.kind).second) << f.name;
    EXPECT_EQ(&FacetsOf(f.kind), &f);
    EXPECT_FALSE(f.what.empty()) << f.name;
  }
  EXPECT_EQ(kinds.size(), 3u);
  EXPECT_EQ(FlavorNames(),
            (Names{{"device-plugin", Partitioner::kAgent},
                   {"dra", Partitioner::kDra},
                   {"gpu-operator", Partitioner::kGpuOperator}}));
  EXPECT_EQ(PartitionerNames(false),
            (Names{{"agent", Partitioner::kAgent},
                   {"dra", Partitioner::kDra},
                   {"gpu-operator", Partitioner::kGpuOperator}}));
  EXPECT_EQ(PartitionerNames(true), (Names{{"agent", Partitioner::kAgent},
                                           {"dra", Partitioner::kDra}}));
}

// The controller acts through the agent's and DRA's drivers; the GPU
// Operator's MIG manager is refused, saying why, never replaced by another.
TEST(PartitionerTest, ADriverForThoseTheControllerActsThroughOnly) {
  kube::KubeClient client(kube::KubeConfig{});
  EXPECT_TRUE(MakePartitionDriver(Partitioner::kAgent, &client, {}).ok());
  EXPECT_TRUE(MakePartitionDriver(Partitioner::kDra, &client, {}).ok());
  auto operator_driver =
      MakePartitionDriver(Partitioner::kGpuOperator, &client, {});
  ASSERT_FALSE(operator_driver.ok());
  EXPECT_EQ(operator_driver.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(operator_driver.status().message().find(
                "--partitioner gpu-operator: the GPU Operator's MIG manager"),
            std::string::npos)
      << operator_driver.status().message();
}

// No silent default: a backend given no driver does nothing and says so
// (it built the agent's before, which on a DRA cluster read no layouts).
TEST(PartitionerTest, ABackendWithoutADriverRefusesToGuess) {
  kube::KubeClient client(kube::KubeConfig{});
  KubernetesBackend backend(&client, BackendOptions{});
  auto observed = backend.Observe();
  ASSERT_FALSE(observed.ok());
  EXPECT_EQ(observed.status().message(),
            "the Kubernetes backend has no partition driver: say who "
            "partitions the GPUs (--partitioner)");
  EXPECT_FALSE(backend.Start(Action{}).ok());
  EXPECT_FALSE(backend.Live().has_value());
}

}  // namespace
}  // namespace migserve::kubernetes
