#include "controller/degraded_target.h"

#include <gtest/gtest.h>

#include "cluster/cluster_state.h"

namespace migserve::controller {
namespace {

// Three GPUs of one 7g instance: a on the first two (100 req/s each, 150
// required), b on the third (50 of 50).
deployment::Deployment ThreeGpus() {
  deployment::Deployment d;
  d.gpu = "A100-SXM4-80GB";
  d.services = {{"a", "resnet50", 150, 100}, {"b", "bert", 50, 100}};
  for (int g = 0; g < 3; ++g) {
    deployment::DeployedGpu gpu;
    gpu.id = g;
    deployment::PlacedInstance instance;
    instance.profile = "7g.80gb";
    instance.service = g < 2 ? "a" : "b";
    instance.batch = 1;
    instance.throughput = g < 2 ? 100 : 50;
    gpu.instances.push_back(instance);
    d.gpus.push_back(gpu);
  }
  return d;
}

// A target that fits is left alone.
TEST(DegradedTargetTest, ATargetThatFitsIsKept) {
  deployment::Deployment target = ThreeGpus();
  cluster::ClusterState cluster =
      cluster::ClusterFromDeployment(target, {}).value();
  EXPECT_FALSE(FitTarget(cluster, target).has_value());
}

// Two GPUs left: dropping any one leaves one service short; dropping one of
// a's keeps two thirds of a and all of b (5/3 of the rates served, against
// 1 for dropping b's), and of a's two the last is dropped.
TEST(DegradedTargetTest, DropsTheGpuThatCostsTheLeast) {
  deployment::Deployment target = ThreeGpus();
  cluster::ClusterState cluster =
      cluster::ClusterFromDeployment(target, {}).value();
  cluster.gpus.pop_back();
  std::optional<DegradedTarget> fit = FitTarget(cluster, target);
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->dropped_gpus, 1);
  ASSERT_EQ(fit->deployment.gpus.size(), 2u);
  EXPECT_EQ(fit->deployment.gpus[0].id, 0);
  EXPECT_EQ(fit->deployment.gpus[1].id, 2);
  EXPECT_EQ(fit->short_services, std::vector<std::string>{"a"});
  EXPECT_EQ(fit->deployment.services[0].throughput, 100);
  EXPECT_EQ(fit->deployment.services[1].throughput, 50);
  EXPECT_EQ(fit->description,
            "the cluster cannot hold the target: dropped 1 of its 3 serving "
            "GPUs; short: a (100 of 150 req/s)");
  // One GPU left: b's keeps one service at its rate.
  cluster.gpus.pop_back();
  fit = FitTarget(cluster, target);
  ASSERT_TRUE(fit.has_value());
  ASSERT_EQ(fit->deployment.gpus.size(), 1u);
  EXPECT_EQ(fit->deployment.gpus[0].id, 2);
  EXPECT_EQ(fit->deployment.services[0].throughput, 0);
}

}  // namespace
}  // namespace migserve::controller
