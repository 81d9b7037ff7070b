// A language model's token p99s behind the real proxy (issue 75): a mixed
// deployment optimized, the proxy's nginx configuration rendered by
// `migserve router --render` and run, the LLM service's replica an
// emulated vLLM whose continuous batcher (llm/continuous_batcher.h) steps
// on the wall clock at its slice's modelled step times, and open-loop
// requests at the service's whole rate, each reaching it by the body's
// model alone, streamed. The client measures each request's time to first
// token and time per output token.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_test_util.h"
#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "llm/batcher_simulation.h"
#include "llm/llm_model.h"
#include "llm/slice_model.h"
#include "proxy/testing/emulated_openai_replica.h"
#include "proxy/testing/emulated_replica.h"
#include "proxy/testing/local_nginx.h"
#include "queueing/p99_capacity.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::e2e {
namespace {

using cli::Cli;
using cli::CliResult;
using Clock = std::chrono::steady_clock;

// A DNN service beside a chat service on one 4g.40gb replica loaded to
// three quarters of its credit (a second replica would be balanced by
// requests in flight, which serve's random split does not model).
constexpr char kChatWorkload[] = R"(gpu: A100-SXM4-80GB
services:
  - {name: resnet50-1, model: resnet50, throughput: 500, latency_ms: 100}
  - {name: chat, model: llama-3.2-3b, kind: llm, throughput: 20, ttft_ms: 1000, tpot_ms: 50, prompt_tokens: 256, output_tokens: 64, prompt_cv: 0.5, output_cv: 0.5}
)";
constexpr int kChatRequests = 400;  // the first tenth a warm-up, as serve's

// One request's times through the proxy, ms; tokens: how many arrived.
struct ChatTimes {
  double ttft_ms = -1;
  double tpot_ms = -1;
  long tokens = 0;
};

// Sends `r` as a streamed chat completion for `model` and times it.
ChatTimes SendChat(int port, const std::string& model,
                   const llm::BatcherArrival& r) {
  std::string prompt;
  for (long w = 0; w < r.prompt; ++w) prompt += w == 0 ? "w" : " w";
  nlohmann::json body = {
      {"model", model},
      {"stream", true},
      {"max_tokens", r.output},
      {"messages", {{{"role", "user"}, {"content", prompt}}}}};
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(60);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  ChatTimes m;
  Clock::time_point sent = Clock::now(), first, last;
  std::string pending;
  req.content_receiver = [&](const char* data, size_t size, uint64_t,
                             uint64_t) {
    pending.append(data, size);
    for (size_t at; (at = pending.find("\n\n")) != std::string::npos;) {
      if (pending.rfind("data: {", 0) == 0) {
        last = Clock::now();
        if (m.tokens++ == 0) first = last;
      }
      pending.erase(0, at + 2);
    }
    return true;
  };
  httplib::Response res;
  httplib::Error error;
  if (!client.send(req, res, error) || res.status != 200 || m.tokens == 0) {
    return m;
  }
  auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  m.ttft_ms = ms(first - sent);
  if (m.tokens > 1)
    m.tpot_ms = ms(last - first) / static_cast<double>(m.tokens - 1);
  return m;
}

// The client-measured p99 TTFT and TPOT at the service's whole rate meet
// its SLOs and lie within 15% of serve's model of a replica (the batcher
// simulation, llm::SimulateBatcher) for the very requests sent; every
// token of every request arrives, and nothing reaches another service's
// replica. (serve itself reports the long-run p99 of 20,000 requests: a
// 20 s run's p99 is over 360, whose sampling error alone is some 35% at
// the TTFT tail, 220 ms against serve's 141 on this workload; serve's
// figures are in the message, and must meet the SLOs too.)
TEST(RealProxyTest, TheProxyHoldsALanguageModelsTokenP99sAsServeSays) {
  if (testing::kAddressSanitizer) {
    GTEST_SKIP() << "timing: the sanitizers slow the replica's loop";
  }
  std::string dir = testing::TempDir() + "/llm-proxy";
  std::filesystem::create_directories(dir);
  std::string workload = dir + "/w.yaml", d = dir + "/d.json";
  ASSERT_TRUE(WriteFileAtomic(workload, kChatWorkload).ok());
  CliResult r =
      Cli({"optimize", "-w", workload, "-p", testing::kA100Profiles, "-o", d});
  ASSERT_EQ(r.code, 0) << r.err;
  auto deployed = deployment::LoadDeployment(d);
  ASSERT_TRUE(deployed.ok());
  auto state = cluster::ClusterFromDeployment(*deployed, {});
  ASSERT_TRUE(state.ok());
  const workload::Service* chat = nullptr;
  for (const workload::Service& s : deployed->services) {
    if (s.name == "chat") chat = &s;
  }
  ASSERT_TRUE(chat != nullptr && chat->tokens);

  // The chat's one replica, emulated on its slice; the DNN's answering.
  std::optional<llm::SliceCapacity> slice;
  proxy::EmulatedReplica dnn;
  std::unique_ptr<proxy::EmulatedOpenAiReplica> replica;
  std::string csv = "service,node,gpu,start,address,port\n";
  for (const cluster::GpuState& g : state->gpus) {
    for (const cluster::Slot& s : g.slots) {
      if (!s.replica) continue;
      int port = dnn.port();
      if (s.replica->service == "chat") {
        ASSERT_FALSE(slice) << "one replica of chat";
        slice = llm::SliceOf(*llm::ShippedLlmModels().Find(chat->model).value(),
                             *g.model, g.model->profiles[s.instance.profile])
                    .value();
        proxy::EmulatedOpenAiOptions options{"chat", "chat", chat->model};
        options.slice = slice;
        replica = std::make_unique<proxy::EmulatedOpenAiReplica>(options);
        port = replica->port();
      }
      csv += fmt::format("{},{},{},{},127.0.0.1,{}\n", s.replica->service,
                         g.id.node, g.id.index, s.instance.start, port);
    }
  }
  ASSERT_TRUE(slice);
  int port = testing::FreePort();
  std::string conf = dir + "/nginx.conf";
  r = Cli({"router", "--render", "-d", d, "--replicas",
           testing::WriteTempFile("llm-proxy.csv", csv), "--run-dir", dir,
           "--listen", fmt::format("127.0.0.1:{}", port), "--grpc-listen",
           fmt::format("127.0.0.1:{}", testing::FreePort()), "-o", conf});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string start = proxy::NginxBinary() + " -p " + dir + "/ -c " + conf +
                      " 2>" + dir + "/start.err &";
  ASSERT_EQ(std::system(start.c_str()), 0);
  {
    httplib::Client probe("127.0.0.1", port);
    for (int tries = 0; tries < 200 && !probe.Get("/v2/health/live"); ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }

  // The requests the simulation runs, sent when they arrive.
  queueing::Traffic traffic;
  traffic.service_rate = chat->throughput;
  const llm::BatcherRun run{chat->throughput, kChatRequests, 1};
  std::vector<llm::BatcherArrival> requests =
      llm::BatcherArrivals(*chat->tokens, traffic, run);
  std::vector<ChatTimes> measured(requests.size());
  std::vector<std::thread> clients;
  const Clock::time_point begin = Clock::now();
  for (size_t i = 0; i < requests.size(); ++i) {
    std::this_thread::sleep_until(
        begin + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(requests[i].arrival_s)));
    // By the body's model alone: the model, served by one service.
    clients.emplace_back(
        [&, i] { measured[i] = SendChat(port, chat->model, requests[i]); });
  }
  for (std::thread& t : clients) t.join();
  std::string stop = "kill $(cat " + dir + "/nginx.pid)";
  EXPECT_EQ(std::system(stop.c_str()), 0);

  std::vector<double> ttft, tpot;
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_EQ(measured[i].tokens, requests[i].output) << "request " << i;
    if (i < requests.size() / 10) continue;
    ttft.push_back(measured[i].ttft_ms);
    if (measured[i].tpot_ms >= 0) tpot.push_back(measured[i].tpot_ms);
  }
  EXPECT_EQ(replica->misrouted(), 0);
  const double ttft_p99 = queueing::Quantile(&ttft, 0.99);
  const double tpot_p99 = queueing::Quantile(&tpot, 0.99);
  const llm::BatcherStats same =
      llm::SimulateBatcher(*slice, *chat->tokens, traffic, run);
  r = Cli({"serve", "-d", d, "-w", workload, "-p", testing::kA100Profiles,
           "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json served;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  for (const auto& s : report["services"]) {
    if (s["service"] == "chat") served = s["llm"];
  }
  ASSERT_TRUE(served.is_object()) << r.out;
  std::string figures = fmt::format(
      "measured p99 TTFT {:.1f} ms, TPOT {:.2f} ms; the same requests "
      "simulated {:.1f}, {:.2f}; serve's long run {:.1f}, {:.2f}",
      ttft_p99, tpot_p99, same.ttft_p99_ms, same.tpot_p99_ms,
      served["ttft_p99_ms"].get<double>(), served["tpot_p99_ms"].get<double>());
  EXPECT_LE(ttft_p99, chat->tokens->ttft_ms) << figures;
  EXPECT_LE(tpot_p99, chat->tokens->tpot_ms) << figures;
  EXPECT_NEAR(ttft_p99 / same.ttft_p99_ms, 1, 0.15) << figures;
  EXPECT_NEAR(tpot_p99 / same.tpot_p99_ms, 1, 0.15) << figures;
  EXPECT_LE(served["ttft_p99_ms"].get<double>(), chat->tokens->ttft_ms);
  EXPECT_LE(served["tpot_p99_ms"].get<double>(), chat->tokens->tpot_ms);
  std::cerr << figures << "\n";
}

}  // namespace
}  // namespace migserve::e2e
