// The stand-in API server authorizes as a real one does (RBAC from the
// shipped deploy/base/rbac.yaml), so that the end-to-end tests, which run each
// component as its service account, fail where a permission is missing.
#include <gtest/gtest.h>

#include "boundary/input_file.h"
#include "kube/kube_client.h"
#include "kube/testing/api_server_standin.h"
#include "util/test_util.h"

namespace migserve::kube {
namespace {

class StandInRbacTest : public ::testing::Test {
 protected:
  StandInRbacTest()
      : server_({"",
                 "",
                 "admin",
                 5,
                 {{"controller-token",
                   ServiceAccountUser("migserve", "migserve-controller")},
                  {"agent-token",
                   ServiceAccountUser("migserve", "migserve-agent")}}}) {}

  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    std::string rbac =
        ReadFile(testing::SourcePath("deploy/base/rbac.yaml")).value();
    ASSERT_TRUE(server_.ApplyManifests(rbac, "deploy/base/rbac.yaml").ok());
  }

  KubeClient As(const std::string& token) {
    return KubeClient(server_.ClientConfig("default", token));
  }

  ApiServerStandIn server_;
};

// A refused write's body is read before the refusal, as a real API server
// does: the client's next request on the same connection is answered, not
// parsed out of that body's bytes (a body larger than the server's read
// buffer was: 414 here, an empty 400 to the controller's lease release).
TEST_F(StandInRbacTest, ARefusedWriteLeavesTheConnectionUsable) {
  constexpr char kMaps[] = "/api/v1/namespaces/migserve-replicas/configmaps";
  server_.Put(std::string(kMaps) + "/other",
              {{"metadata", {{"name", "other"}}}});
  KubeClient controller = As("controller-token");
  for (int i = 0; i < 3; ++i) {
    auto refused =
        controller.Patch(std::string(kMaps) + "/other",
                         {{"data", {{"a", std::string(1 << 16, 'x')}}}});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("forbidden"), std::string::npos)
        << refused.status().message();
    auto next = controller.Get(std::string(kMaps) + "/other");
    EXPECT_TRUE(next.ok()) << next.status().ToString();
  }
}

TEST_F(StandInRbacTest, AllowsWhatTheRolesGrantAndNothingElse) {
  constexpr char kMaps[] = "/api/v1/namespaces/migserve-replicas/configmaps";
  KubeClient controller = As("controller-token");
  EXPECT_TRUE(
      controller.List("/api/v1/namespaces/migserve-replicas/pods", "").ok());
  EXPECT_TRUE(
      controller
          .Create(kMaps, {{"metadata", {{"name", "migserve-proxy-routes"}}},
                          {"data", {{"generation", "1"}}}})
          .ok());
  EXPECT_TRUE(controller
                  .Patch(std::string(kMaps) + "/migserve-proxy-routes",
                         {{"data", {{"generation", "2"}}}})
                  .ok());
  // resourceNames: the routes ConfigMap only.
  ASSERT_TRUE(
      controller.Create(kMaps, {{"metadata", {{"name", "other"}}}}).ok());
  auto other =
      controller.Patch(std::string(kMaps) + "/other", {{"data", {{"a", "b"}}}});
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find(
                "configmaps \"other\" is forbidden: User "
                "\"system:serviceaccount:migserve:migserve-controller\" "
                "cannot patch resource \"configmaps\" in API group \"\" in "
                "the namespace \"migserve-replicas\""),
            std::string::npos)
      << other.status().message();
  // Another namespace, and a verb no rule has.
  EXPECT_FALSE(controller.List("/api/v1/namespaces/default/pods", "").ok());
  EXPECT_FALSE(
      controller.Delete("/api/v1/namespaces/migserve-replicas/configmaps/other")
          .ok());
  // Nodes through the ClusterRole, at the cluster scope.
  server_.Put("/api/v1/nodes/n", {{"metadata", {{"name", "n"}}}});
  KubeClient agent = As("agent-token");
  EXPECT_TRUE(agent
                  .Patch("/api/v1/nodes/n",
                         {{"metadata", {{"annotations", {{"a", "b"}}}}}})
                  .ok());
  EXPECT_FALSE(agent
                   .Create("/api/v1/namespaces/migserve-replicas/pods",
                           {{"metadata", {{"name", "p"}}}})
                   .ok());
  // The administrator may do anything; an unknown token nothing.
  EXPECT_TRUE(As("admin").List("/api/v1/namespaces/default/pods", "").ok());
  auto unknown = As("nobody").List("/api/v1/nodes", "");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("401"), std::string::npos)
      << unknown.status().message();

  std::set<std::string> seen;
  for (const RbacRequest& r : server_.Authorized()) {
    seen.insert(r.user.substr(r.user.rfind(':') + 1) + ": " + r.ToString());
  }
  EXPECT_EQ(seen, (std::set<std::string>{
                      "migserve-agent: patch nodes",
                      "migserve-controller: create configmaps in "
                      "migserve-replicas",
                      "migserve-controller: list pods in migserve-replicas",
                      "migserve-controller: patch configmaps in "
                      "migserve-replicas",
                  }));
}

}  // namespace
}  // namespace migserve::kube
