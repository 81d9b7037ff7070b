// `migserve router --render`: the proxy's nginx configuration for a
// deployment over a list of replica addresses, with no Kubernetes API,
// checked by the real nginx (`nginx -t`).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "cli/testing/rendered_proxy.h"
#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "llm/llm_model.h"
#include "proxy/nginx_config.h"
#include "proxy/testing/emulated_openai_replica.h"
#include "proxy/testing/emulated_replica.h"
#include "proxy/testing/local_nginx.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;

TEST(RouterRenderTest, WritesAConfigurationNginxAcceptsWithEveryReplica) {
  std::string day = SourcePath("data/deployments/day.json");
  auto d = deployment::LoadDeployment(day);
  ASSERT_TRUE(d.ok());
  auto state = cluster::ClusterFromDeployment(*d, {});
  ASSERT_TRUE(state.ok());
  std::string csv = "service,node,gpu,start,address,port,grpc_port\n";
  int replicas = 0;
  for (const cluster::GpuState& g : state->gpus) {
    for (const cluster::Slot& s : g.slots) {
      if (!s.replica) continue;
      csv += s.replica->service + "," + g.id.node + "," +
             std::to_string(g.id.index) + "," +
             std::to_string(s.instance.start) + ",10.0." +
             std::to_string(replicas / 200) + "." +
             std::to_string(replicas % 200 + 1) + ",8000,8001\n";
      ++replicas;
    }
  }
  std::string dir = testing::TempDir() + "/render";
  std::filesystem::create_directories(dir);
  std::string addresses = testing::WriteTempFile("replicas.csv", csv);
  std::string conf = dir + "/nginx.conf";
  CliResult r = Cli({"router", "--render", "-d", day, "--replicas", addresses,
                     "--run-dir", dir, "-o", conf});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::string text = ReadFile(conf).value();
  size_t servers = 0;
  for (size_t at = text.find(":8000 weight="); at != std::string::npos;
       at = text.find(":8000 weight=", at + 1)) {
    ++servers;
  }
  EXPECT_EQ(servers, static_cast<size_t>(replicas));
  EXPECT_NE(text.find("listen 0.0.0.0:8001 http2;"), std::string::npos);
  std::string check = proxy::NginxBinary() + " -t -q -p " + dir + "/ -c " +
                      conf + " 2>" + dir + "/t.err";
  EXPECT_EQ(std::system(check.c_str()), 0) << ReadFile(dir + "/t.err").value();

  // A deployment whose replica declares more than any measurement of its
  // point (150 req/s, which its batch and latency would allow) is refused,
  // not weighted by (issue 92).
  nlohmann::json lying = nlohmann::json::parse(ReadFile(day).value());
  lying["gpus"][0]["instances"][0]["throughput"] = 150;
  std::string lie = testing::WriteTempFile("lying.json", lying.dump());
  r = Cli({"router", "--render", "-d", lie, "--replicas", addresses});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(lie + ": gpu 0: instance "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("declares 150 req/s for 'bert-1', more than the "
                       "101.907 its profile row measured in "
                       "data/profiles/a100-80gb.csv (built in)"),
            std::string::npos)
      << r.err;

  // A replica without an address is left out, and said so.
  std::string fewer = testing::WriteTempFile(
      "fewer.csv", csv.substr(0, csv.rfind('\n', csv.size() - 2) + 1));
  r = Cli({"router", "--render", "-d", day, "--replicas", fewer});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find(fmt::format("1 of {} routed replicas have no address",
                                   replicas)),
            std::string::npos)
      << r.err;
}

TEST(RouterRenderTest, ABadAddressListIsRefusedNamingLineAndColumn) {
  std::string day = SourcePath("data/deployments/day.json");
  for (const auto& [row, error] :
       {std::pair<std::string, std::string>{
            "bert-1,node-0,0,0,10.0.0.1;include x,8000",
            "b.csv:2: address: must be an IP address or host name"},
        {"bert 1,node-0,0,0,10.0.0.1,8000", "b.csv:2: service"},
        {"bert-1,node-0,0,0,10.0.0.1,70000", "b.csv:2: port"}}) {
    std::string path = testing::WriteTempFile(
        "b.csv", "service,node,gpu,start,address,port\n" + row + "\n");
    CliResult r = Cli({"router", "--render", "-d", day, "--replicas", path});
    EXPECT_EQ(r.code, 2) << row;
    EXPECT_NE(r.err.find(error), std::string::npos) << r.err;
  }
  CliResult r = Cli({"router", "--render", "-d", day});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--render: needs -d DEPLOYMENT and --replicas CSV"),
            std::string::npos)
      << r.err;
}

// A deployment of a DNN service beside two language models' services,
// rendered and run by the real nginx with its JavaScript module: a chat
// request reaches its service's vLLM-style replica by the body's model
// alone (the service, or a model one service serves), streamed, and the
// DNN service's KServe v2 route still works.
TEST(RouterRenderTest, LanguageModelsAreReachedByTheBodysModelThroughNginx) {
  std::string workload = testing::WriteTempFile(
      "mini-llm.yaml",
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: resnet50-1, model: resnet50, throughput: 500, "
      "latency_ms: 100}\n"
      "  - {name: chat-8b, model: llama-3.1-8b, kind: llm, throughput: 2, "
      "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 512, output_tokens: 128}\n"
      "  - {name: small-3b, model: llama-3.2-3b, kind: llm, throughput: 2, "
      "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 512, output_tokens: 128}\n");
  std::string dir = testing::TempDir() + "/render-llm";
  std::filesystem::create_directories(dir);
  std::string d = dir + "/d.json";
  CliResult r = Cli({"optimize", "-w", workload, "-p",
                     SourcePath("data/profiles/a100-80gb.csv"), "-o", d});
  ASSERT_EQ(r.code, 0) << r.err;
  auto deployed = deployment::LoadDeployment(d);
  ASSERT_TRUE(deployed.ok());
  auto state = cluster::ClusterFromDeployment(*deployed, {});
  ASSERT_TRUE(state.ok());
  // Each answers to the names export's vLLM pods are given, and refuses
  // any other, as vLLM does.
  proxy::EmulatedOpenAiOptions chat_options{"chat", "chat-8b", "llama-3.1-8b",
                                            3, 0};
  chat_options.served = llm::ServedNames(
      "chat-8b", "llama-3.1-8b", *llm::ShippedLlmModels().Find("llama-3.1-8b"));
  proxy::EmulatedOpenAiOptions small_options{"small", "small-3b",
                                             "llama-3.2-3b", 3, 0};
  small_options.served =
      llm::ServedNames("small-3b", "llama-3.2-3b",
                       *llm::ShippedLlmModels().Find("llama-3.2-3b"));
  proxy::EmulatedOpenAiReplica chat(chat_options);
  proxy::EmulatedOpenAiReplica small(small_options);
  proxy::EmulatedReplica dnn;
  std::string csv = "service,node,gpu,start,address,port\n";
  for (const cluster::GpuState& g : state->gpus) {
    for (const cluster::Slot& slot : g.slots) {
      if (!slot.replica) continue;
      const std::string& service = slot.replica->service;
      int port = service == "chat-8b"    ? chat.port()
                 : service == "small-3b" ? small.port()
                                         : dnn.port();
      csv += fmt::format("{},{},{},{},127.0.0.1,{}\n", service, g.id.node,
                         g.id.index, slot.instance.start, port);
    }
  }
  RenderedProxy proxy(d, csv, dir);
  ASSERT_EQ(proxy.rendered().code, 0) << proxy.rendered().err;
  EXPECT_NE(proxy.rendered().err.find("migserve-openai.js"), std::string::npos)
      << proxy.rendered().err;
  ASSERT_TRUE(proxy.started());
  httplib::Client client("127.0.0.1", proxy.port());
  auto ask = [&](const std::string& model) {
    auto res =
        client.Post("/v1/chat/completions",
                    nlohmann::json({{"model", model}, {"stream", true}}).dump(),
                    "application/json");
    return res ? res->body : std::string("(no answer)");
  };
  EXPECT_NE(ask("chat-8b").find("\"replica\":\"chat\""), std::string::npos);
  EXPECT_NE(ask("llama-3.2-3b").find("\"replica\":\"small\""),
            std::string::npos);
  // By a Hugging Face id of the model table (issue 89: the proxy answered
  // 404 to those).
  EXPECT_NE(
      ask("meta-llama/Llama-3.1-8B-Instruct").find("\"replica\":\"chat\""),
      std::string::npos);
  EXPECT_NE(ask("meta-llama/Llama-3.2-3B").find("\"replica\":\"small\""),
            std::string::npos);
  auto infer =
      client.Post("/v2/models/resnet50/infer", "{}", "application/json");
  EXPECT_TRUE(infer && infer->status == 200);
  EXPECT_EQ(dnn.hits(), 1);
  EXPECT_EQ(chat.misrouted() + small.misrouted(), 0);
  // The configuration and the script it imports are one set (issue 92): a
  // configuration that cannot be written leaves the old script too.
  const std::string script = dir + "/migserve-openai.js";
  ASSERT_TRUE(WriteFileAtomic(script, "// the old script\n").ok());
  std::string addresses = testing::WriteTempFile("render-llm.csv", csv);
  r = Cli({"router", "--render", "-d", d, "--replicas", addresses, "--run-dir",
           dir, "-o", "/dev/full"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("/dev/full: cannot write"), std::string::npos) << r.err;
  EXPECT_EQ(*ReadFile(script), "// the old script\n");
  r = Cli({"router", "--render", "-d", d, "--replicas", addresses, "--run-dir",
           dir, "-o", dir + "/nginx.conf"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(*ReadFile(script), proxy::OpenAiScript());
}

}  // namespace
}  // namespace migserve::cli
