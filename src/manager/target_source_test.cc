// The target in a ConfigMap: a write to another of its keys (the
// autoscaler keeps its state in the same ConfigMap) is no change of the
// target, so the controller does not wake and resync for it; a write to
// the target's key is. In a ServingTarget: a status write is no change, a
// spec write is.
#include "manager/target_source.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "boundary/input_file.h"
#include "kube/testing/api_server_standin.h"
#include "profile/profile_csv.h"
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

// The target in a ServingTarget (deploy/base/crd.yaml): its spec is the
// deployment; the controller's own status writes do not wake it, a new
// generation does, and a spec the deployment parser refuses is named by
// the resource.
TEST(TargetSourceTest, AServingTargetChangesWithItsGeneration) {
  kube::ApiServerStandIn server({"", "", "", 1});
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(server.ApplyShipped("deploy/base/crd.yaml").ok());
  kube::KubeClient client(server.ClientConfig("ns"));
  const std::string collection =
      "/apis/migserve.io/v1alpha1/namespaces/ns/servingtargets";
  auto read = [](const char* name) {
    return nlohmann::json::parse(
        ReadFile(testing::SourcePath(std::string("data/deployments/") + name))
            .value());
  };
  auto made = client.Create(collection, {{"apiVersion", "migserve.io/v1alpha1"},
                                         {"kind", "ServingTarget"},
                                         {"metadata", {{"name", "target"}}},
                                         {"spec", read("day.json")}});
  ASSERT_TRUE(made.ok()) << made.status().message();
  TargetOptions options;
  options.resource = "target";
  TargetSource source(options, &client);
  EXPECT_EQ(source.ResourcePath(), collection + "/target");
  auto day = source.Load();
  ASSERT_TRUE(day.ok()) << day.status().ToString();
  EXPECT_EQ(day->gpus.size(), read("day.json")["gpus"].size());
  EXPECT_EQ(source.generation(), 1);
  ASSERT_TRUE(client
                  .Patch(collection + "/target/status",
                         {{"status", {{"stage", "idle"}}}})
                  .ok());
  EXPECT_FALSE(source.Changed());
  ASSERT_TRUE(
      client.Patch(collection + "/target", {{"spec", read("night.json")}})
          .ok());
  EXPECT_TRUE(source.Changed());
  ASSERT_TRUE(source.Load().ok());
  EXPECT_EQ(source.generation(), 2);
  EXPECT_FALSE(source.Changed());

  // A missing object, and a cluster without the definition, each named.
  TargetOptions other;
  other.resource = "other";
  auto missing = TargetSource(other, &client).Load();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "servingtarget ns/other: not found (migserve export "
            "--target-resource other writes one)");
  kube::ApiServerStandIn bare({"", "", "", 1});
  ASSERT_TRUE(bare.Start().ok());
  kube::KubeClient bare_client(bare.ClientConfig("ns"));
  auto undefined = TargetSource(options, &bare_client).Load();
  ASSERT_FALSE(undefined.ok());
  EXPECT_EQ(undefined.status().message(),
            "servingtarget ns/target: this cluster serves no ServingTarget: "
            "apply its definition, deploy/base/crd.yaml (the install does)");

  nlohmann::json twice = read("night.json");
  twice["services"].push_back(twice["services"][0]);
  ASSERT_TRUE(client.Patch(collection + "/target", {{"spec", twice}}).ok());
  auto refused = source.Load();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("servingtarget ns/target spec"),
            std::string::npos)
      << refused.status().message();
}

// With the profiles, a target whose replica declares more than its row
// measured (it would draw more than its share of the traffic) is refused
// by name; the same target passes without them.
TEST(TargetSourceTest,
     ATargetThatOverstatesAReplicaIsRefusedWithOrWithoutProfiles) {
  nlohmann::json night = nlohmann::json::parse(
      ReadFile(testing::SourcePath("data/deployments/night.json")).value());
  night["gpus"][0]["instances"][0]["throughput"] = 150;
  std::string file = testing::WriteTempFile("inflated.json", night.dump());
  kube::KubeClient client(kube::KubeConfig{});
  TargetOptions options;
  options.file = file;
  // Without profiles of its own, the shipped ones disprove it.
  auto built_in = TargetSource(options, &client).Load();
  ASSERT_FALSE(built_in.ok());
  EXPECT_EQ(built_in.status().message(),
            file +
                ": gpu 0: instance 1g.10gb@0: declares 150 req/s for "
                "'bert-1', more than the 101.907 its profile row measured "
                "in data/profiles/a100-80gb.csv (built in)");
  options.profiles = std::make_shared<const profile::ProfileTable>(
      profile::LoadProfileCsv(
          testing::SourcePath("data/profiles/a100-80gb.csv"))
          .value());
  auto refused = TargetSource(options, &client).Load();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            file +
                ": gpu 0: instance 1g.10gb@0: declares 150 req/s for "
                "'bert-1', more than the 101.907 its profile row measured "
                "in " +
                testing::SourcePath("data/profiles/a100-80gb.csv"));
}

}  // namespace
}  // namespace migserve::manager
