#include "proxy/proxy_config.h"

#include <gtest/gtest.h>

#include "proxy/nginx_config.h"
#include "proxy/testing/proxy_values.h"

namespace migserve::proxy {
namespace {

ProxyConfig TwoReplicas() {
  return {7,
          {Upstream("search", "resnet50",
                    {Backend("10.0.0.1", 8000, 9484, 8001),
                     Backend("10.0.0.2", 8000, 2079)}),
           Upstream("qa", "bert", {})}};
}

TEST(ProxyConfigTest, ReadsWhatItWrites) {
  ProxyConfig config = TwoReplicas();
  auto read = ParseProxyConfig(FormatProxyConfig(config), "p.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, config);
  // A language model's service keeping its conversations, each replica
  // bounded by its batch.
  config.upstreams[1] =
      Upstream("chat", "llama-3.1-8b", {Backend("10.0.0.3", 8000, 500)}, true);
  config.upstreams[1].affinity = true;
  config.upstreams[1].backends[0].max_conns = 256;
  read = ParseProxyConfig(FormatProxyConfig(config), "p.json");
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
          {"service": "a", "model": "n", "backends": []}]})",
       "services[1].service: 'a' is listed twice"},
      {R"({"generation": 1, "services": [{"service": "a", "model": "m",
          "backends": [{"address": "h", "port": 80, "weight": 1,
                        "grpc_port": 70000}]}]})",
       "services[0].backends[0].grpc_port: must be 0 to 65535, got 70000"},
      {R"({"generation": 1, "services": [{"service": "a", "model": "m",
          "backends": [{"address": "h", "port": 80, "weight": 1,
                        "max_conns": -1}]}]})",
       "services[0].backends[0].max_conns: must be 0 to 65536, got -1"},
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
  setup.listen = Must(Endpoint::ParseListen("8080"));
  setup.grpc_listen = Must(Endpoint::ParseListen("8001"));
  std::string text = RenderNginxConfig(TwoReplicas(), setup);
  for (const char* line :
       {"upstream migserve_search {", "zone migserve_search 66k;",
        "server 10.0.0.1:8000 weight=9484 max_fails=0;",
        "server 10.0.0.2:8000 weight=2079 max_fails=0;",
        // gRPC: only the replica with a gRPC port.
        "upstream migserve_grpc_search {\n    zone migserve_grpc_search 66k;\n"
        "    server 10.0.0.1:8001 weight=9484 max_fails=0;\n    keepalive",
        "listen 0.0.0.0:8001 http2;",
        "proxy_pass http://migserve_$migserve_service;",
        "grpc_pass grpc://migserve_grpc_$migserve_grpc_service;",
        "return 200 \"7\\n\";", "daemon off;", "client_max_body_size 0;"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  // A service without replicas has no upstream, and answers 503.
  EXPECT_EQ(text.find("upstream migserve_qa"), std::string::npos);
  EXPECT_NE(text.find("\"qa\" \"!empty\";"), std::string::npos) << text;
  EXPECT_NE(text.find("\"~^/v2/models/bert(/|$)\" \"!empty\";"),
            std::string::npos);
}

// A language model's service that keeps its conversations (issue 89) is a
// consistent-hash ring of its replicas, weighted by their credits scaled to
// 1,000 in all (nginx puts 160 points per unit on the ring, in every
// worker), each bounded by its batch, and a least_conn upstream its
// requests spill to when every replica is full; without affinity, or
// with --llm-balancing least-conn, least_conn alone.
TEST(NginxConfigTest, AConversationsServiceIsARingOfBoundedReplicas) {
  NginxSetup setup;
  setup.listen = Must(Endpoint::ParseListen("8080"));
  ProxyConfig config{3,
                     {Upstream("chat", "llama-3.1-8b",
                               {Backend("10.0.0.1", 8000, 300000),
                                Backend("10.0.0.2", 8000, 100000)},
                               true)}};
  for (ProxyBackend& b : config.upstreams[0].backends) b.max_conns = 256;
  config.upstreams[0].affinity = true;
  std::string text = RenderNginxConfig(config, setup);
  for (const char* line :
       {"upstream migserve_chat {\n    zone migserve_chat 66k;\n"
        "    hash $migserve_openai_session consistent;\n"
        "    server 10.0.0.1:8000 weight=750 max_conns=256 max_fails=0;\n"
        "    server 10.0.0.2:8000 weight=250 max_conns=256 max_fails=0;\n",
        "upstream migserve_spill_chat {\n    zone migserve_spill_chat 66k;\n"
        "    least_conn;\n"
        "    server 10.0.0.1:8000 weight=300000 max_fails=0;\n",
        "js_var $migserve_openai_session;",
        "error_page 502 = @migserve_openai_spill;",
        "proxy_pass http://migserve_spill_$migserve_openai_service;"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  setup.llm_affinity = false;
  text = RenderNginxConfig(config, setup);
  EXPECT_EQ(text.find("hash $migserve_openai_session"), std::string::npos);
  EXPECT_EQ(text.find("migserve_spill_"), std::string::npos);
  EXPECT_NE(text.find("    least_conn;\n    server 10.0.0.1:8000 "
                      "weight=300000 max_fails=0;"),
            std::string::npos)
      << text;
}

// Requests find their service by header, else by the one service of the
// model in the path; two services of one model need the header.
TEST(NginxConfigTest, ServicesOfOneModelAreToldApartByHeader) {
  ProxyConfig config{
      1,
      {Upstream("bert-1", "bert", {Backend("10.0.0.1", 8000, 1)}),
       Upstream("bert-2", "bert", {Backend("10.0.0.2", 8000, 1)}),
       Upstream("r", "resnet.50", {Backend("10.0.0.3", 8000, 1)})}};
  std::string text = RenderNginxConfig(config, {});
  for (const char* line : {
           "    \"~^/v2/models/bert(/|$)\" \"!ambiguous\";\n"
           "    \"~^/v2/models/resnet[.]50(/|$)\" \"r\";\n",
           "  map $http_migserve_service $migserve_service {\n"
           "    \"\" \"$migserve_by_model\";\n    default \"!unknown\";\n"
           "    \"bert-1\" \"bert-1\";\n    \"bert-2\" \"bert-2\";\n"
           "    \"r\" \"r\";\n  }\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  // No gRPC listener unless asked for.
  EXPECT_EQ(text.find("http2"), std::string::npos);
}

}  // namespace
}  // namespace migserve::proxy
