// The permissions the controller ships with (deploy/base/rbac.yaml) are the
// ones it needs: day to night through the controller command uses exactly the
// verbs listed here, each of them granted, and with any one of them taken
// out of the shipped Role or ClusterRole the same transition fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "e2e/testing/kubernetes_e2e_fixture.h"
#include "kube/serving_target.h"

namespace migserve::e2e {
namespace {

// What day to night asks of the API server as the controller: "verb
// [group/]resource [in namespace]" (kube::RbacRequest::ToString).
const std::set<std::string>& UsedVerbs() {
  static const std::set<std::string> used = {
      "create coordination.k8s.io/leases in migserve-replicas",
      "get coordination.k8s.io/leases in migserve-replicas",
      "patch coordination.k8s.io/leases in migserve-replicas",
      "create pods in migserve-replicas",
      "create services in migserve-replicas",
      "delete pods in migserve-replicas",
      "delete services in migserve-replicas",
      "get gateway.networking.k8s.io/httproutes in migserve-replicas",
      "get services in migserve-replicas",
      "list nodes",
      "list pods in migserve-replicas",
      "list services in migserve-replicas",
      "patch gateway.networking.k8s.io/httproutes in migserve-replicas",
      "patch nodes",
      "patch services in migserve-replicas",
      "watch nodes",
      "watch pods in migserve-replicas",
  };
  return used;
}

std::set<std::string> ControllerRequests(const kube::ApiServerStandIn& server) {
  std::string user =
      kube::ServiceAccountUser("migserve", "migserve-controller");
  std::set<std::string> out;
  for (const kube::RbacRequest& r : server.Authorized()) {
    if (r.user == user) out.insert(r.ToString());
  }
  return out;
}

class RbacE2eTest : public KubernetesE2eTest {
 protected:
  // Takes `verb` on `resource` out of every rule of the controller's Role
  // and ClusterRole as the stand-in holds them.
  void Revoke(const std::string& verb, const std::string& resource) {
    for (const char* role :
         {"/apis/rbac.authorization.k8s.io/v1/clusterroles/migserve-controller",
          "/apis/rbac.authorization.k8s.io/v1/namespaces/migserve-replicas/"
          "roles/migserve-controller"}) {
      ASSERT_TRUE(server_.Update(role, [&](Json* object) {
        for (Json& rule : (*object)["rules"]) {
          bool names = false;
          for (const Json& r : rule["resources"])
            names = names || r == resource;
          if (!names) continue;
          Json verbs = Json::array();
          for (const Json& v : rule["verbs"]) {
            if (v != verb) verbs.push_back(v);
          }
          rule["verbs"] = verbs;
        }
      }));
    }
  }
};

TEST_F(RbacE2eTest, DayToNightUsesExactlyTheseGrantedVerbs) {
  deployment::Deployment day = ShippedDeployment("day"),
                         night = ShippedDeployment("night");
  Start(day);
  server_.ClearAuthorized();  // what Start did in the controller's name
  CliResult r = Controller(testing::SourcePath("data/deployments/night.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ControllerRequests(server_), UsedVerbs());
}

class RevokedVerbTest : public RbacE2eTest,
                        public ::testing::WithParamInterface<std::string> {};

TEST_P(RevokedVerbTest, DayToNightFailsWithoutIt) {
  std::string used = GetParam();
  std::string verb = used.substr(0, used.find(' '));
  std::string resource = used.substr(used.find(' ') + 1);
  resource = resource.substr(0, resource.find(' '));
  resource = resource.substr(resource.find('/') + 1);
  deployment::Deployment day = ShippedDeployment("day");
  Start(day);
  Revoke(verb, resource);
  CliResult r = Controller(testing::SourcePath("data/deployments/night.json"));
  EXPECT_NE(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("forbidden"), std::string::npos) << r.err;
}

// With its target a ServingTarget, the controller also reads it (a watch
// may or may not start before --once ends) and writes its status, through
// /status only; without that permission the move still happens and the
// refusal is said.
TEST_F(RbacE2eTest, AServingTargetIsReadAndOnlyItsStatusWritten) {
  deployment::Deployment day = ShippedDeployment("day");
  Start(day);
  kube::KubeClient admin(AdminConfig());
  ASSERT_TRUE(admin
                  .Create(kube::ServingTargetsPath(kNamespace),
                          kube::ServingTargetObject(
                              kNamespace, "migserve-target",
                              Json::parse(DeploymentText("night"))))
                  .ok());
  server_.ClearAuthorized();
  CliResult r = Controller("", {"--target-resource", "migserve-target"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> used = ControllerRequests(server_);
  std::set<std::string> expected = UsedVerbs();
  expected.insert(
      {"get migserve.io/servingtargets in migserve-replicas",
       "patch migserve.io/servingtargets/status in migserve-replicas"});
  std::set<std::string> allowed = expected;
  allowed.insert({"list migserve.io/servingtargets in migserve-replicas",
                  "watch migserve.io/servingtargets in migserve-replicas"});
  EXPECT_TRUE(
      std::includes(used.begin(), used.end(), expected.begin(), expected.end()))
      << ::testing::PrintToString(used);
  EXPECT_TRUE(
      std::includes(allowed.begin(), allowed.end(), used.begin(), used.end()))
      << ::testing::PrintToString(used);
}

TEST_F(RbacE2eTest, AStatusItMayNotWriteIsSaidNotFatal) {
  Start(ShippedDeployment("day"));
  ASSERT_TRUE(kube::KubeClient(AdminConfig())
                  .Create(kube::ServingTargetsPath(kNamespace),
                          kube::ServingTargetObject(
                              kNamespace, "migserve-target",
                              Json::parse(DeploymentText("night"))))
                  .ok());
  Revoke("patch", "servingtargets/status");
  CliResult r = Controller("", {"--target-resource", "migserve-target"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("writing the status of "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("forbidden"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Controller, RevokedVerbTest, ::testing::ValuesIn(UsedVerbs()),
    [](const ::testing::TestParamInfo<std::string>& info) {
      std::string name;
      for (char c : info.param.substr(0, info.param.find(" in "))) {
        name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      }
      return name;
    });

}  // namespace
}  // namespace migserve::e2e
