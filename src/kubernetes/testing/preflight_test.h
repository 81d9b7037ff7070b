// A fixture for the preflight checks (`migserve doctor`, partition/*_check.h):
// the stand-in API server, a client of it, and the problems of a check's
// findings.
#ifndef MIGSERVE_KUBERNETES_TESTING_PREFLIGHT_TEST_H_
#define MIGSERVE_KUBERNETES_TESTING_PREFLIGHT_TEST_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kube/kube_client.h"
#include "kube/testing/api_server_standin.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/finding.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

class PreflightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    config_.server = server_.url();
    client_ = std::make_unique<kube::KubeClient>(config_);
  }

  // The texts of the problems among `findings`, which must have been read.
  static std::vector<std::string> ProblemsOf(
      const StatusOr<std::vector<Finding>>& findings) {
    EXPECT_TRUE(findings.ok()) << findings.status().ToString();
    std::vector<std::string> out;
    if (!findings.ok()) return out;
    for (const Finding& f : *findings) {
      if (f.problem) out.push_back(f.text);
    }
    return out;
  }

  kube::ApiServerStandIn server_{{"", "", "", 1}};
  kube::KubeConfig config_;
  std::unique_ptr<kube::KubeClient> client_;
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_TESTING_PREFLIGHT_TEST_H_
