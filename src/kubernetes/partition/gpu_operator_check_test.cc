// `migserve doctor`'s checks against the stand-in API server holding a GPU
// Operator cluster's objects as the Operator writes them.
#include "kubernetes/partition/gpu_operator_check.h"

#include <gtest/gtest.h>

#include "kubernetes/cluster_model.h"
#include "kubernetes/testing/preflight_test.h"

namespace migserve::kubernetes {
namespace {

using Json = nlohmann::json;

class GpuOperatorCheckTest : public PreflightTest {
 protected:
  void Node(const std::string& name, Json labels) {
    labels["nvidia.com/mig.capable"] = "true";
    server_.Put("/api/v1/nodes/" + name,
                {{"metadata", {{"name", name}, {"labels", labels}}}});
  }

  void Policy(const std::string& strategy, bool manager) {
    server_.Put("/apis/nvidia.com/v1/clusterpolicies/cluster-policy",
                {{"metadata", {{"name", "cluster-policy"}}},
                 {"spec",
                  {{"mig", {{"strategy", strategy}}},
                   {"migManager",
                    {{"enabled", manager},
                     {"config", {{"name", "custom-mig-config"}}}}}}}});
    server_.Put(
        "/apis/apps/v1/namespaces/gpu-operator/daemonsets/nvidia-mig-manager",
        {{"metadata",
          {{"name", "nvidia-mig-manager"},
           {"labels", {{"app", "nvidia-mig-manager"}}}}}});
  }

  std::vector<std::string> Problems(
      const std::map<std::string, std::string>& configs) {
    return ProblemsOf(CheckGpuOperator(client_.get(), configs));
  }
};

TEST_F(GpuOperatorCheckTest, AMixedClusterLabelledAsExportSaysHasNoProblem) {
  Policy("mixed", true);
  Node("a", {{"nvidia.com/mig.config", "migserve-1"},
             {"nvidia.com/mig.config.state", "success"}});
  Node("b", {{"nvidia.com/mig.config", "migserve-2"}});
  EXPECT_TRUE(Problems({{"a", "migserve-1"}, {"b", "migserve-2"}}).empty());
}

TEST_F(GpuOperatorCheckTest, SaysWhatWillNotWork) {
  Policy("single", false);
  Node("a", {{"nvidia.com/mig.strategy", "single"}});
  Node("b", {{"nvidia.com/mig.config", "all-disabled"}});
  Node("c", {{"nvidia.com/mig.config", "migserve-3"},
             {"nvidia.com/mig.config.state", "failed"}});
  std::vector<std::string> problems = Problems({{"a", "migserve-1"},
                                                {"b", "migserve-2"},
                                                {"c", "migserve-3"},
                                                {"gone", "migserve-4"}});
  std::vector<std::string> want = {
      "ClusterPolicy cluster-policy: spec.mig.strategy is single, but "
      "replicas request nvidia.com/mig-<profile>, which only the mixed "
      "strategy advertises (set spec.mig.strategy: mixed)",
      "ClusterPolicy cluster-policy: the MIG manager is disabled "
      "(spec.migManager.enabled)",
      "node a: nvidia.com/mig.strategy=single: its MIG devices are "
      "advertised as nvidia.com/gpu",
      "node a: no nvidia.com/mig.config label, so the MIG manager applies "
      "nothing (kubectl label node a nvidia.com/mig.config=migserve-1)",
      "node b: nvidia.com/mig.config=all-disabled, but export wrote "
      "migserve-2 for it (kubectl label node b "
      "nvidia.com/mig.config=migserve-2 --overwrite)",
      "node c: the MIG manager failed to apply migserve-3 "
      "(nvidia.com/mig.config.state=failed)",
      "node gone of the deployment is not a MIG-capable node of the cluster",
  };
  EXPECT_EQ(problems, want);
}

TEST_F(GpuOperatorCheckTest, AClusterWithoutTheOperatorSaysSo) {
  Node("a", {{"nvidia.com/mig.config", "x"}});
  EXPECT_EQ(Problems({}),
            (std::vector<std::string>{
                "no ClusterPolicy: is the GPU Operator installed?",
                "no MIG manager DaemonSet (app=nvidia-mig-manager) in "
                "gpu-operator"}));
}

}  // namespace
}  // namespace migserve::kubernetes
