// The proxy as the official OpenAI Node SDK sees it (issue 89): the real
// nginx and its JavaScript module in front of emulated replicas as strict
// as vLLM's OpenAI server, driven by npm `openai` (tools/openai-client):
// chat and completions, streamed and not, by every name the proxy accepts;
// the SDK's error classes for an unknown model, no replica, a prompt too
// long and a body too large; 200 streams at once across route changes.

#include "proxy/testing/openai_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "proxy/nginx_config.h"
#include "proxy/nginx_process.h"
#include "proxy/proxy_config.h"
#include "proxy/testing/emulated_openai_replica.h"
#include "proxy/testing/local_nginx.h"
#include "proxy/testing/openai_proxy_fixture.h"
#include "proxy/testing/proxy_values.h"
#include "util/test_util.h"

namespace migserve::proxy {
namespace {

using nlohmann::json;

class OpenAiClientTest : public OpenAiProxyFixture {};

TEST_F(OpenAiClientTest, EveryNameAndEveryRefusalAsTheSdkSeesThem) {
  const std::string llama_id = "meta-llama/Llama-3.1-8B-Instruct";
  EmulatedOpenAiOptions oa{"a", "chat-a", "llama-3.1-8b", 5, 0};
  oa.served = {"chat-a", "llama-3.1-8b", llama_id};
  oa.max_model_len = 64;
  EmulatedOpenAiReplica a(oa);
  setup_.llm_max_body_mb = 1;
  ProxyConfig config{1,
                     {Llm("chat-a", "llama-3.1-8b",
                          {Backend("127.0.0.1", a.port(), 1)}, {llama_id}),
                      Llm("chat-d", "qwen2.5-7b", {})}};
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);

  const std::vector<std::string> names = {"chat-a", "llama-3.1-8b", llama_id};
  json requests = json::array();
  for (const char* api : {"chat", "completions"}) {
    for (bool stream : {false, true}) {
      for (const std::string& name : names) {
        requests.push_back(
            {{"api", api}, {"model", name}, {"stream", stream}, {"words", 3}});
      }
      requests.push_back({{"api", api},
                          {"model", "llama-3.1-8b"},
                          {"stream", stream},
                          {"headers", {{"migserve-service", "chat-a"}}},
                          {"words", 3}});
    }
  }
  const size_t routed = requests.size();
  // The refusals: no such model (the proxy's), no replica, a prompt past
  // the replica's --max-model-len (vLLM's), a body past the proxy's limit.
  requests.push_back({{"api", "chat"}, {"model", "Chat-A"}});
  requests.push_back({{"api", "chat"}, {"model", "chat-d"}});
  requests.push_back({{"api", "chat"}, {"model", "chat-a"}, {"words", 100}});
  requests.push_back({{"api", "chat"}, {"model", "chat-a"}, {"words", 200000}});
  requests.push_back(
      {{"api", "chat"}, {"model", "chat-a"}, {"stream", true}, {"words", 100}});
  auto results =
      DriveOpenAiClient(port_, {{"concurrency", 4}, {"requests", requests}});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), requests.size());
  for (size_t i = 0; i < routed; ++i) {
    const json& r = (*results)[i];
    const json& asked = requests[i];
    ASSERT_TRUE(r["ok"].get<bool>()) << asked << ": " << r;
    // The answer names the model as asked, as vLLM's does.
    EXPECT_EQ(r["model"], asked["model"]) << asked;
    EXPECT_EQ(r["content"], asked["stream"].get<bool>() ? "01234" : "0 1 2 3 4")
        << asked;
    EXPECT_EQ(r["finish_reason"], "length") << asked;
    EXPECT_EQ(r["usage"]["completion_tokens"], 5) << asked << ": " << r;
    EXPECT_EQ(r["usage"]["prompt_tokens"], 3) << asked << ": " << r;
    if (asked["stream"].get<bool>()) {
      EXPECT_EQ(r["chunks"], 5) << asked;
    }
  }
  struct Refused {
    const char* error_class;
    int status;
    json code;
    json param;
  } refused[] = {
      {"NotFoundError", 404, "model_not_found", nullptr},
      {"InternalServerError", 503, "no_replica", nullptr},
      {"BadRequestError", 400, 400, "input_tokens"},
      {"APIError", 413, "body_too_large", nullptr},
      {"BadRequestError", 400, 400, "input_tokens"},
  };
  for (size_t k = 0; k < std::size(refused); ++k) {
    const json& r = (*results)[routed + k];
    ASSERT_FALSE(r["ok"].get<bool>()) << r;
    EXPECT_EQ(r["error"]["class"], refused[k].error_class) << r;
    EXPECT_EQ(r["error"]["status"], refused[k].status) << r;
    EXPECT_EQ(r["error"]["code"], refused[k].code) << r;
    EXPECT_EQ(r["error"]["param"], refused[k].param) << r;
  }
  EXPECT_EQ(a.misrouted(), 0);
}

// 200 streams at once, each longer than the drain timeout, while the
// route changes over and over (a replica joins and leaves, weights move):
// the SDK gets every token and the end of every stream. The client is the
// SDK as users run it, its two retries on: at a reload nginx's old worker
// may close a connection it accepted before reading its request (about 1
// in 400 on a loaded machine), which the SDK sends again; no stream that
// began is cut.
TEST_F(OpenAiClientTest, TwoHundredStreamsAcrossRouteChangesLoseNoToken) {
  constexpr int kTokens = 20;
  setup_.drain_timeout = *Duration::Of(1);
  setup_.llm_idle_timeout = *Duration::Of(30);
  EmulatedOpenAiReplica a({"a", "chat-a", "m", kTokens, 100});
  EmulatedOpenAiReplica b({"b", "chat-a", "m", kTokens, 100});
  ProxyConfig config{1,
                     {Llm("chat-a", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);
  json plan = {{"concurrency", 200},
               {"retries", 2},
               {"requests", json::array({{{"api", "chat"},
                                          {"model", "chat-a"},
                                          {"stream", true},
                                          {"words", 8},
                                          {"repeat", 400}}})}};
  std::atomic<bool> finished{false};
  StatusOr<json> results = Status::Unavailable("not run");
  std::thread client([&] {
    results = DriveOpenAiClient(port_, plan);
    finished = true;
  });
  int changes = 0;
  Status applied = Status::Ok();
  // b joins, the weights change twice, b leaves, and again: b is routed
  // three changes in four (each over a second: the drain), so that the
  // second wave of streams meets it however the machine's load delays
  // the waves (with b routed one change in two, a loaded run once sent it
  // nothing).
  while (!finished && applied.ok()) {
    config.generation += 1;
    std::vector<ProxyBackend>& backends = config.upstreams[0].backends;
    if (changes % 4 == 0) {
      backends.push_back(Backend("127.0.0.1", b.port(), 2));
    } else if (changes % 4 == 3) {
      backends.pop_back();
    } else {
      backends[0].weight = backends[0].weight == 1 ? 3 : 1;
    }
    applied = nginx->ApplyAndDrain(config);
    ++changes;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  client.join();
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  EXPECT_GE(changes, 4);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 400u);
  int tokens = 0;
  for (const json& r : *results) {
    ASSERT_TRUE(r["ok"].get<bool>()) << r;
    EXPECT_TRUE(r["done"].get<bool>()) << r;
    tokens += r["chunks"].get<int>();
    EXPECT_EQ(r["usage"]["completion_tokens"], kTokens) << r;
  }
  EXPECT_EQ(tokens, 400 * kTokens);
  EXPECT_EQ(a.hits() + b.hits(), 400);
  EXPECT_GT(b.hits(), 0);
}

}  // namespace
}  // namespace migserve::proxy
