// The target in a ConfigMap: a write to another of its keys (the
// autoscaler keeps its state in the same ConfigMap) is no change of the
// target, so the controller does not wake and resync for it; a write to
// the target's key is.
#include "manager/target_source.h"

#include <gtest/gtest.h>

#include "kube/testing/api_server_standin.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::manager {
namespace {

TEST(TargetSourceTest, AnotherKeyOfTheConfigMapIsNoChange) {
  kube::ApiServerStandIn server({"", "", "", 1});
  ASSERT_TRUE(server.Start().ok());
  kube::KubeConfig config;
  config.server = server.url();
  config.namespace_ = "ns";
  kube::KubeClient client(config);
  const std::string path = "/api/v1/namespaces/ns/configmaps/target";
  std::string day =
      ReadFile(testing::SourcePath("data/deployments/day.json")).value();
  std::string night =
      ReadFile(testing::SourcePath("data/deployments/night.json")).value();
  server.Put(path, {{"metadata", {{"name", "target"}}},
                    {"data", {{"deployment.json", day}}}});
  TargetOptions options;
  options.configmap = "target";
  TargetSource source(options, &client);
  ASSERT_TRUE(source.Load().ok());
  // The first two looks list the ConfigMap, so each sees the write before.
  ASSERT_TRUE(server.Update(path, [](nlohmann::json* map) {
    (*map)["data"]["autoscale-state.json"] = "{\"low_since\": {}}";
  }));
  EXPECT_FALSE(source.Changed());
  ASSERT_TRUE(server.Update(path, [&](nlohmann::json* map) {
    (*map)["data"]["deployment.json"] = night;
  }));
  EXPECT_TRUE(source.Changed());
  auto loaded = source.Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_FALSE(source.Changed());
}

}  // namespace
}  // namespace migserve::manager
