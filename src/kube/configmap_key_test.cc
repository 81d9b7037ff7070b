#include "kube/configmap_key.h"

#include <gtest/gtest.h>

#include "kube/testing/api_server_standin.h"

namespace migserve::kube {
namespace {

// Read, write, and a write refused because someone wrote in between.
TEST(ConfigMapKeyTest, AWriteAppliesOnlyToTheVersionRead) {
  ApiServerStandIn server({"", "", "", 1});
  ASSERT_TRUE(server.Start().ok());
  KubeClient client(server.ClientConfig(), {1, 0.01, 5});
  server.Put("/api/v1/namespaces/ns/configmaps/target",
             {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", "target"}, {"namespace", "ns"}}},
              {"data", {{"deployment.json", "one"}, {"other", "x"}}}});
  ConfigMapKey key(&client, "ns", "target", "deployment.json");
  EXPECT_EQ(key.Describe(), "configmap ns/target key deployment.json");
  // Nothing read, no version: no write.
  EXPECT_EQ(key.Write("zero").code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(key.Read().value(), "one");
  ASSERT_TRUE(key.Write("two").ok());
  EXPECT_EQ(key.Read().value(), "two");
  auto map = server.Get("/api/v1/namespaces/ns/configmaps/target");
  ASSERT_TRUE(map.has_value());
  EXPECT_EQ((*map)["data"]["other"], "x");

  // Another writer between our read and our write.
  ConfigMapKey other(&client, "ns", "target", "deployment.json");
  ASSERT_TRUE(other.Read().ok());
  ASSERT_TRUE(other.Write("three").ok());
  Status refused = key.Write("four");
  EXPECT_EQ(refused.code(), Status::Code::kAborted) << refused.ToString();
  EXPECT_NE(refused.message().find("configmap ns/target key deployment.json"),
            std::string::npos);
  EXPECT_EQ(key.Read().value(), "three");

  // A key only one writer writes is put whatever was written in between,
  // and leaves the other keys alone.
  ConfigMapKey state(&client, "ns", "target", "state.json");
  ASSERT_TRUE(other.Write("five").ok());
  ASSERT_TRUE(state.Put("s1").ok());
  ASSERT_TRUE(other.Read().ok());
  ASSERT_TRUE(other.Write("six").ok());
  ASSERT_TRUE(state.Put("s2").ok());
  EXPECT_EQ(state.Read().value(), "s2");
  EXPECT_EQ(key.Read().value(), "six");

  ConfigMapKey missing(&client, "ns", "target", "nope");
  EXPECT_EQ(missing.Read().status().message(),
            "configmap ns/target key nope: missing");
}

}  // namespace
}  // namespace migserve::kube
