#include "proxy/proxy_config.h"

#include <gtest/gtest.h>

#include "proxy/nginx_config.h"

namespace migserve::proxy {
namespace {

ProxyConfig TwoReplicas() {
  return {7,
          {{"search",
            "resnet50",
            {{"10.0.0.1", 8000, 9484}, {"10.0.0.2", 8000, 2079}}},
           {"qa", "bert", {}}}};
}

TEST(ProxyConfigTest, ReadsWhatItWrites) {
  ProxyConfig config = TwoReplicas();
  auto read = ParseProxyConfig(FormatProxyConfig(config), "p.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, config);
}

// A group's weight shared by its replicas, rounded to what nginx takes.
TEST(ProxyConfigTest, WeightsAreReplicaWeightsRounded) {
  EXPECT_EQ(NginxWeight(cluster::ReplicaWeight(948440, 1)), 948440);
  EXPECT_EQ(NginxWeight(cluster::ReplicaWeight(10000, 3)), 3333);
  EXPECT_EQ(NginxWeight(cluster::ReplicaWeight(1, 3)), 1);
  EXPECT_EQ(NginxWeight(cluster::ReplicaWeight(5, 0)), 1);
  EXPECT_EQ(NginxWeight(2e9), cluster::kMaxRouteWeight);
}

TEST(ProxyConfigTest, ErrorsNameTheField) {
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {R"({"services": []})", "p.json: generation: missing"},
      {R"({"generation": 1, "services": [{"service": "a", "model": "m",
          "backends": [{"address": "h", "port": 80, "weight": 0}]}]})",
       "services[0].backends[0].weight: must be 1 to 1000000, got 0"},
      {R"({"generation": 1, "services": [{"service": "a b", "model": "m",
          "backends": []}]})",
       "services[0].service: must be 1 to 63 letters"},
      {R"({"generation": 1, "services": [{"service": "a", "model": "m",
          "backends": [{"address": "h;", "port": 80, "weight": 1}]}]})",
       "services[0].backends[0].address"},
      {R"({"generation": 1, "services": [
          {"service": "a", "model": "m", "backends": []},
          {"service": "b", "model": "m", "backends": []}]})",
       "services[1].model: 'm' is routed to another service too"},
  };
  for (const Case& c : cases) {
    auto read = ParseProxyConfig(c.text, "p.json");
    ASSERT_FALSE(read.ok()) << c.text;
    EXPECT_NE(read.status().message().find(c.error), std::string::npos)
        << read.status().message();
  }
}

TEST(NginxConfigTest, UpstreamsRotateByWeightAndAnswerTheGeneration) {
  NginxSetup setup;
  setup.listen = "8080";
  std::string text = RenderNginxConfig(TwoReplicas(), setup);
  for (const char* line :
       {"upstream migserve_search {", "zone migserve_search 64k;",
        "server 10.0.0.1:8000 weight=9484 max_fails=0;",
        "server 10.0.0.2:8000 weight=2079 max_fails=0;",
        "location /v2/models/resnet50/ {", "proxy_pass http://migserve_search;",
        "return 200 \"7\\n\";", "daemon off;"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  // A service without replicas has no upstream, and answers 503.
  EXPECT_EQ(text.find("upstream migserve_qa"), std::string::npos);
  EXPECT_NE(text.find("location /v2/models/bert/ {\n      return 503;"),
            std::string::npos);
}

}  // namespace
}  // namespace migserve::proxy
