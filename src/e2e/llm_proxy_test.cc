// A language model's token p99s behind the real proxy (issue 75): a mixed
// deployment optimized, the proxy's nginx configuration rendered by
// `migserve router --render` and run, the LLM service's replica an
// emulated vLLM whose continuous batcher (llm/continuous_batcher.h) steps
// on the wall clock at its slice's modelled step times, and open-loop
// requests at the service's whole rate, each reaching it by the body's
// model alone, streamed. The client measures each request's time to first
// token and time per output token.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_test_util.h"
#include "cli/testing/rendered_proxy.h"
#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "llm/balanced_batchers.h"
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

// A DNN service beside a chat service of `rate` req/s (Llama-3.2-3B,
// prompts 256 and outputs 64 tokens at cv 0.5, p99 TTFT 1,000 ms, TPOT
// 50 ms).
std::string ChatWorkload(int rate) {
  return fmt::format(
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {{name: resnet50-1, model: resnet50, throughput: 500, latency_ms: "
      "100}}\n"
      "  - {{name: chat, model: llama-3.2-3b, kind: llm, throughput: {}, "
      "ttft_ms: 1000, tpot_ms: 50, prompt_tokens: 256, output_tokens: 64, "
      "prompt_cv: 0.5, output_cv: 0.5}}\n",
      rate);
}

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

// What one run measured and what the models said of it (ms).
struct ChatRun {
  llm::LlmTerms slo;
  double ttft_p99 = 0, tpot_p99 = 0;    // measured through nginx
  double same_ttft = 0, same_tpot = 0;  // simulated, the same requests
  std::vector<long> hits, dispatched;   // per replica: measured, simulated
  std::string figures;                  // all of it, said
};

// Optimizes the chat workload at `rate`, renders the proxy with `migserve
// router --render` and runs nginx before the chat's replicas (emulated on
// their slices) and the DNN's, and sends `requests` streamed requests at
// the times and of the lengths the batcher simulation draws (seed 1), each
// by the body's model alone. Every token of every request must arrive and
// none reach another service's replica.
void RunChat(int rate, int requests, ChatRun* out) {
  std::string dir = testing::TempDir() + fmt::format("/llm-proxy-{}", rate);
  std::filesystem::create_directories(dir);
  std::string workload = dir + "/w.yaml", d = dir + "/d.json";
  ASSERT_TRUE(WriteFileAtomic(workload, ChatWorkload(rate)).ok());
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

  // The chat's replicas, emulated on their slices; the DNN's answering.
  std::vector<llm::BalancedReplica> slices;
  proxy::EmulatedReplica dnn;
  std::vector<std::unique_ptr<proxy::EmulatedOpenAiReplica>> replicas;
  std::string csv = "service,node,gpu,start,address,port\n";
  for (const cluster::GpuState& g : state->gpus) {
    for (const cluster::Slot& s : g.slots) {
      if (!s.replica) continue;
      int port = dnn.port();
      if (s.replica->service == "chat") {
        slices.push_back(
            {llm::SliceOf(*llm::ShippedLlmModels().Find(chat->model).value(),
                          *g.model, g.model->profiles[s.instance.profile])
                 .value(),
             s.replica->credit});
        proxy::EmulatedOpenAiOptions options{
            fmt::format("chat-{}", replicas.size()), "chat", chat->model};
        options.slice = slices.back().slice;
        replicas.push_back(
            std::make_unique<proxy::EmulatedOpenAiReplica>(options));
        port = replicas.back()->port();
      }
      csv += fmt::format("{},{},{},{},127.0.0.1,{}\n", s.replica->service,
                         g.id.node, g.id.index, s.instance.start, port);
    }
  }
  cli::RenderedProxy proxy(d, csv, dir);
  ASSERT_EQ(proxy.rendered().code, 0) << proxy.rendered().err;
  ASSERT_TRUE(proxy.started());
  const int port = proxy.port();

  // The requests the simulation runs, sent when they arrive.
  queueing::Traffic traffic;
  traffic.service_rate = chat->throughput.value();
  const llm::BatcherRun run{chat->throughput.value(), requests, 1};
  std::vector<llm::BatcherArrival> sent =
      llm::BatcherArrivals(*chat->tokens, traffic, run);
  std::vector<ChatTimes> measured(sent.size());
  std::vector<std::thread> clients;
  const Clock::time_point begin = Clock::now();
  for (size_t i = 0; i < sent.size(); ++i) {
    std::this_thread::sleep_until(
        begin + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(sent[i].arrival_s)));
    // By the body's model alone: the model, served by one service.
    clients.emplace_back(
        [&, i] { measured[i] = SendChat(port, chat->model, sent[i]); });
  }
  for (std::thread& t : clients) t.join();

  std::vector<double> ttft, tpot;
  for (size_t i = 0; i < sent.size(); ++i) {
    ASSERT_EQ(measured[i].tokens, sent[i].output) << "request " << i;
    if (i < sent.size() / 10) continue;
    ttft.push_back(measured[i].ttft_ms);
    if (measured[i].tpot_ms >= 0) tpot.push_back(measured[i].tpot_ms);
  }
  for (const auto& replica : replicas) {
    EXPECT_EQ(replica->misrouted(), 0);
    out->hits.push_back(replica->hits());
  }
  out->slo = *chat->tokens;
  out->ttft_p99 = queueing::Quantile(&ttft, 0.99);
  out->tpot_p99 = queueing::Quantile(&tpot, 0.99);
  // The proxy's one nginx is one balancer.
  llm::BatcherSamples same = llm::RunBalancedBatchers(
      slices, 1, llm::Balancing::kAffinity, *chat->tokens, traffic, run);
  out->same_ttft = queueing::Quantile(&same.ttft_ms, 0.99);
  out->same_tpot = queueing::Quantile(&same.tpot_ms, 0.99);
  out->dispatched = same.dispatched;
  r = Cli({"serve", "-d", d, "-w", workload, "-p", testing::kA100Profiles,
           "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json served;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  for (const auto& s : report["services"]) {
    if (s["service"] == "chat") served = s["llm"];
  }
  ASSERT_TRUE(served.is_object()) << r.out;
  EXPECT_LE(served["ttft_p99_ms"].get<double>(), out->slo.ttft_ms);
  EXPECT_LE(served["tpot_p99_ms"].get<double>(), out->slo.tpot_ms);
  out->figures = fmt::format(
      "{} replicas: measured p99 TTFT {:.1f} ms, TPOT {:.2f} ms, requests "
      "per replica {}; the same requests simulated {:.1f}, {:.2f}, {}; "
      "serve's long run {:.1f}, {:.2f}",
      replicas.size(), out->ttft_p99, out->tpot_p99, fmt::join(out->hits, "/"),
      out->same_ttft, out->same_tpot, fmt::join(out->dispatched, "/"),
      served["ttft_p99_ms"].get<double>(), served["tpot_p99_ms"].get<double>());
  std::cerr << out->figures << "\n";
}

// One replica (a 4g.40gb at 20 req/s, 77% of its credit), 400 requests:
// the client-measured p99 TTFT and TPOT meet the SLOs and lie within 15%
// of serve's model of a replica (the continuous batcher's simulation) for
// the very requests sent. (serve itself reports the long-run p99 of
// 20,000 requests: a p99 over this run's 360 counted is that far from it
// by sampling alone, 220 ms against 141 at the TTFT tail; its figures are
// in the message, and must meet the SLOs too.)
TEST(RealProxyTest, TheProxyHoldsALanguageModelsTokenP99sAsServeSays) {
  if (testing::kAddressSanitizer) {
    GTEST_SKIP() << "timing: the sanitizers slow the replica's loop";
  }
  ChatRun run;
  RunChat(20, 400, &run);
  if (::testing::Test::HasFatalFailure()) return;
  ASSERT_EQ(run.hits.size(), 1u);
  EXPECT_LE(run.ttft_p99, run.slo.ttft_ms) << run.figures;
  EXPECT_LE(run.tpot_p99, run.slo.tpot_ms) << run.figures;
  EXPECT_NEAR(run.ttft_p99 / run.same_ttft, 1, 0.15) << run.figures;
  EXPECT_NEAR(run.tpot_p99 / run.same_tpot, 1, 0.15) << run.figures;
}

// Two replicas of different credits (a 3g.40gb and a 7g.80gb, 17.9 and
// 50.7 req/s, at 62 req/s; at 60 the optimizer, credits on each replica's
// random share since issue 93, ties four smaller replicas with them),
// 1,200 requests: nginx's least_conn by credit
// gives each about the share serve's balancing model gives it (within
// 10%: nginx counts a request from when it has read its body to when the
// replica's last byte is through, a little later at both ends than the
// model), the p99s meet the SLOs and the TPOT is within 15% of the
// simulation's for the same requests. The TTFT tail is not held to the
// simulation's: which replica a request meets at an instant of equal
// counts moves it from run to run (98 to 110 ms measured against 83
// simulated in three runs, one beside two busy loops; docs/benchmarks.md).
TEST(RealProxyTest, TheProxyHoldsALanguageModelsP99sAcrossTwoReplicas) {
  if (testing::kAddressSanitizer) {
    GTEST_SKIP() << "timing: the sanitizers slow the replica's loop";
  }
  ChatRun run;
  RunChat(62, 1200, &run);
  if (::testing::Test::HasFatalFailure()) return;
  ASSERT_EQ(run.hits.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_NEAR(static_cast<double>(run.hits[r]) / run.dispatched[r], 1, 0.1)
        << run.figures;
  }
  EXPECT_LE(run.ttft_p99, run.slo.ttft_ms) << run.figures;
  EXPECT_LE(run.tpot_p99, run.slo.tpot_ms) << run.figures;
  EXPECT_NEAR(run.tpot_p99 / run.same_tpot, 1, 0.15) << run.figures;
}

}  // namespace
}  // namespace migserve::e2e
