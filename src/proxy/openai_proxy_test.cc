// Language models' services through real nginx and its JavaScript module:
// the OpenAI API routed by the body's model (or the header), streamed as the
// replica sends it, balanced by requests in flight per weight, beside a
// DNN service's KServe v2 route.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "proxy/nginx_config.h"
#include "proxy/nginx_process.h"
#include "proxy/proxy_config.h"
#include "proxy/testing/emulated_openai_replica.h"
#include "proxy/testing/emulated_replica.h"
#include "proxy/testing/local_nginx.h"
#include "proxy/testing/openai_proxy_fixture.h"
#include "proxy/testing/proxy_values.h"
#include "util/test_util.h"

namespace migserve::proxy {
namespace {

using Clock = std::chrono::steady_clock;

// A chat request for `model`, streamed or not.
std::string Chat(const std::string& model, bool stream = false) {
  return nlohmann::json({{"model", model},
                         {"stream", stream},
                         {"messages", {{{"role", "user"}, {"content", "hi"}}}}})
      .dump();
}

// A streamed chat request for `service`, each chunk given to `receive`.
httplib::Request StreamedChat(const std::string& service,
                              httplib::ContentReceiverWithProgress receive) {
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = Chat(service, true);
  req.set_header("Content-Type", "application/json");
  req.content_receiver = std::move(receive);
  return req;
}

// The replica named in an answer's (first) JSON object.
std::string ReplicaOf(const std::string& body) {
  std::string text = body;
  if (text.rfind("data: ", 0) == 0) text = text.substr(6, text.find('\n') - 6);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_object() ? j.value("replica", "") : "";
}

// `count` streamed chats for `service` at once through the proxy on
// `port`, each on a thread of its own; Check waits for them and expects
// each answered 200 with `tokens` chunks and its end.
class OpenStreams {
 public:
  OpenStreams(int port, int count, const std::string& service)
      : bodies_(count), statuses_(count, 0) {
    for (int k = 0; k < count; ++k) {
      threads_.emplace_back([this, port, service, k] {
        httplib::Client client("127.0.0.1", port);
        client.set_read_timeout(30);
        httplib::Request req = StreamedChat(
            service,
            [this, k](const char* data, size_t size, uint64_t, uint64_t) {
              bodies_[k].append(data, size);
              return true;
            });
        httplib::Response res;
        httplib::Error error;
        if (client.send(req, res, error)) statuses_[k] = res.status;
      });
    }
  }
  ~OpenStreams() { Join(); }

  void Check(int tokens) {
    Join();
    for (size_t k = 0; k < bodies_.size(); ++k) {
      EXPECT_EQ(statuses_[k], 200) << k;
      int chunks = 0;
      for (size_t at = bodies_[k].find("data: {"); at != std::string::npos;
           at = bodies_[k].find("data: {", at + 1)) {
        ++chunks;
      }
      EXPECT_EQ(chunks, tokens) << k << ": " << bodies_[k];
      EXPECT_NE(bodies_[k].find("data: [DONE]"), std::string::npos) << k;
    }
  }

 private:
  void Join() {
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  std::vector<std::string> bodies_;
  std::vector<int> statuses_;
  std::vector<std::thread> threads_;
};

// Waits until `replica` holds `count` requests (at most 2 s).
void AwaitInFlight(const EmulatedOpenAiReplica& replica, int count) {
  for (int i = 0; i < 100 && replica.in_flight() < count; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

class OpenAiProxyTest : public OpenAiProxyFixture {
 protected:
  httplib::Result Post(const std::string& body,
                       const httplib::Headers& headers = {}) {
    httplib::Client client("127.0.0.1", port_);
    return client.Post("/v1/chat/completions", headers, body,
                       "application/json");
  }
};

// Every name the proxy routes by reaches a replica that answers to it
// (issue 89: real vLLM answered 404 to the model's name, and the proxy 404
// to a Hugging Face id): the service, its model where one service serves
// it, the model's aliases, each in its own letter case, as vLLM compares
// them; with the header, the body's model must be one of that service's
// names. The emulated replicas refuse any other name, as vLLM does.
TEST_F(OpenAiProxyTest, RoutesEveryNameItAcceptsToAReplicaThatServesIt) {
  const std::string llama_id = "meta-llama/Llama-3.1-8B-Instruct";
  const std::string qwen_id = "Qwen/Qwen2.5-7B-Instruct";
  EmulatedOpenAiOptions oa{"a", "chat-a", "llama-3.1-8b"};
  oa.served = {"chat-a", "llama-3.1-8b", llama_id};
  EmulatedOpenAiOptions ob{"b", "chat-b", "qwen2.5-7b"};
  ob.served = {"chat-b", "qwen2.5-7b", qwen_id};
  EmulatedOpenAiOptions oc = ob;
  oc.name = "c";
  oc.service = "chat-c";
  oc.served[0] = "chat-c";
  EmulatedOpenAiReplica a(oa), b(ob), c(oc);
  EmulatedReplicaOptions only_m;
  only_m.service = "s";
  only_m.model = "m";
  EmulatedReplica dnn(only_m);
  auto alias = [](const std::string& name) {
    return std::vector<ServedName>{*ServedName::Parse(name)};
  };
  ProxyConfig config{
      1,
      {Llm("chat-a", "llama-3.1-8b", {Backend("127.0.0.1", a.port(), 1)}),
       Llm("chat-b", "qwen2.5-7b", {Backend("127.0.0.1", b.port(), 1)}),
       Llm("chat-c", "qwen2.5-7b", {Backend("127.0.0.1", c.port(), 1)}),
       Llm("chat-d", "gpt-oss-20b", {}),
       Upstream("s", "m", {Backend("127.0.0.1", dnn.port(), 1)})}};
  config.upstreams[0].aliases = alias(llama_id);
  config.upstreams[1].aliases = alias(qwen_id);
  config.upstreams[2].aliases = alias(qwen_id);
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);

  // By the service's name, by a model one service serves, by an alias, by
  // the header (with one of its names, or none): each answered, the
  // answer's model the one asked for.
  struct Routed {
    std::string body;
    httplib::Headers headers;
    std::string replica;
    std::string model;
  } routed[] = {
      {Chat("chat-b"), {}, "b", "chat-b"},
      {Chat("llama-3.1-8b"), {}, "a", "llama-3.1-8b"},
      {Chat(llama_id), {}, "a", llama_id},
      {Chat("qwen2.5-7b"), {{"migserve-service", "chat-c"}}, "c", "qwen2.5-7b"},
      {Chat(qwen_id), {{"migserve-service", "chat-c"}}, "c", qwen_id},
      {R"({"messages": []})", {{"migserve-service", "chat-c"}}, "c", "chat-c"},
  };
  for (const Routed& r : routed) {
    auto res = Post(r.body, r.headers);
    ASSERT_TRUE(res) << r.body;
    EXPECT_EQ(res->status, 200) << r.body << ": " << res->body;
    EXPECT_EQ(ReplicaOf(res->body), r.replica) << r.body;
    nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
    EXPECT_EQ(j.value("model", ""), r.model) << res->body;
  }
  httplib::Client client("127.0.0.1", port_);
  auto completion = client.Post("/v1/completions",
                                nlohmann::json({{"model", "chat-a"}}).dump(),
                                "application/json");
  ASSERT_TRUE(completion);
  EXPECT_EQ(ReplicaOf(completion->body), "a");

  // What cannot be routed says why, as OpenAI's errors do: a name in
  // another case (vLLM would refuse it), a name the header's service does
  // not answer to, a name two services claim.
  struct Refused {
    std::string body;
    httplib::Headers headers;
    int status;
    std::string code;
  } refused[] = {
      {Chat("no-such-model"), {}, 404, "model_not_found"},
      {Chat("META-LLAMA/llama-3.1-8b-instruct"), {}, 404, "model_not_found"},
      {Chat("Chat-A"), {}, 404, "model_not_found"},
      {Chat("chat-a"),
       {{"migserve-service", "chat-c"}},
       404,
       "model_not_found"},
      {Chat("chat-c"),
       {{"migserve-service", "CHAT-C"}},
       404,
       "model_not_found"},
      {Chat("qwen2.5-7b"), {}, 400, "model_ambiguous"},
      {Chat(qwen_id), {}, 400, "model_ambiguous"},
      {Chat("chat-d"), {}, 503, "no_replica"},
      {Chat("gpt-oss-20b"), {}, 503, "no_replica"},
      {"{not json", {}, 400, "invalid_json"},
  };
  for (const Refused& r : refused) {
    auto res = Post(r.body, r.headers);
    ASSERT_TRUE(res) << r.body;
    EXPECT_EQ(res->status, r.status) << r.body;
    nlohmann::json error = nlohmann::json::parse(res->body, nullptr, false);
    ASSERT_TRUE(error.is_object()) << res->body;
    EXPECT_EQ(error["error"]["code"], r.code) << r.body << ": " << res->body;
  }

  // /v1/models lists every name a request may give, as vLLM lists the
  // names it serves: no ambiguous one.
  auto models = client.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 200);
  nlohmann::json list = nlohmann::json::parse(models->body);
  std::vector<std::string> ids;
  for (const auto& m : list["data"]) ids.push_back(m["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"chat-a", "llama-3.1-8b", llama_id,
                                           "chat-b", "chat-c", "chat-d",
                                           "gpt-oss-20b"}));

  // The DNN service's KServe v2 route is as it was.
  auto infer = client.Post("/v2/models/m/infer", "{}", "application/json");
  ASSERT_TRUE(infer);
  EXPECT_EQ(infer->status, 200);
  EXPECT_EQ(dnn.hits(), 1);
  EXPECT_EQ(a.misrouted() + b.misrouted() + c.misrouted(), 0);
}

// The emulated replica is as strict as vLLM's server where a client sees
// it: a name it does not serve, a prompt too long for --max-model-len, a
// stream's usage and end.
TEST(EmulatedOpenAiReplicaTest, AnswersAsVllmsServerDoes) {
  EmulatedOpenAiOptions options{"a", "chat-a", "llama-3.1-8b", 3, 0};
  options.max_model_len = 10;
  EmulatedOpenAiReplica a(options);
  httplib::Client client("127.0.0.1", a.port());
  auto post = [&](const nlohmann::json& body) {
    return client.Post("/v1/chat/completions", body.dump(), "application/json");
  };
  auto unknown =
      post({{"model", "Chat-A"}, {"messages", nlohmann::json::array()}});
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(
      nlohmann::json::parse(unknown->body),
      nlohmann::json::parse(R"({"error": {"message": "The model `Chat-A` )"
                            R"(does not exist.", "type": "NotFoundError", )"
                            R"("param": "model", "code": 404}})"));
  auto message = [](int words) {
    std::string text;
    for (int w = 0; w < words; ++w) text += "word ";
    return nlohmann::json::array({{{"role", "user"}, {"content", text}}});
  };
  auto long_prompt = post({{"model", "chat-a"}, {"messages", message(10)}});
  ASSERT_TRUE(long_prompt);
  EXPECT_EQ(long_prompt->status, 400);
  EXPECT_EQ(nlohmann::json::parse(long_prompt->body)["error"]["param"],
            "input_tokens");
  auto long_output =
      post({{"model", "chat-a"}, {"messages", message(5)}, {"max_tokens", 6}});
  ASSERT_TRUE(long_output);
  EXPECT_EQ(long_output->status, 400);
  EXPECT_EQ(nlohmann::json::parse(long_output->body)["error"]["message"],
            "'max_tokens' or 'max_completion_tokens' is too large: 6. This "
            "model's maximum context length is 10 tokens and your request "
            "has 5 input tokens (6 > 10 - 5).");
  auto whole = post({{"model", "llama-3.1-8b"}, {"messages", message(5)}});
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->status, 200);
  nlohmann::json answer = nlohmann::json::parse(whole->body);
  EXPECT_EQ(answer["model"], "llama-3.1-8b");
  EXPECT_EQ(answer["choices"][0]["message"]["content"], "0 1 2");
  EXPECT_EQ(answer["usage"], nlohmann::json::parse(R"({"prompt_tokens": 5, )"
                                                   R"("completion_tokens": 3, )"
                                                   R"("total_tokens": 8})"));
  auto stream = post({{"model", "chat-a"},
                      {"messages", message(2)},
                      {"stream", true},
                      {"stream_options", {{"include_usage", true}}}});
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->status, 200);
  std::vector<std::string> events;
  for (size_t at = 0;
       (at = stream->body.find("data: ", at)) != std::string::npos; at += 6) {
    events.push_back(
        stream->body.substr(at + 6, stream->body.find('\n', at) - at - 6));
  }
  ASSERT_EQ(events.size(), 5u) << stream->body;
  EXPECT_EQ(nlohmann::json::parse(events[2])["choices"][0]["finish_reason"],
            "length");
  EXPECT_EQ(nlohmann::json::parse(events[3])["usage"]["completion_tokens"], 3);
  EXPECT_EQ(events[4], "[DONE]");
  EXPECT_EQ(a.misrouted(), 1);
}

// Tokens reach the client as the replica sends them (no buffering), and a
// generation longer than nginx's default 60 s idle limit would be fine.
TEST_F(OpenAiProxyTest, StreamsEachTokenAsTheReplicaSendsIt) {
  EmulatedOpenAiReplica a({"a", "chat-a", "m", 5, 300});
  ProxyConfig config{1,
                     {Llm("chat-a", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);
  EXPECT_NE(RenderNginxConfig(config, setup_).find("proxy_read_timeout 3600s"),
            std::string::npos);

  httplib::Client client("127.0.0.1", port_);
  std::vector<double> at;  // seconds since the request, per chunk received
  std::string received;
  const Clock::time_point begin = Clock::now();
  httplib::Request req = StreamedChat(
      "chat-a", [&](const char* data, size_t size, uint64_t, uint64_t) {
        received.append(data, size);
        at.push_back(
            std::chrono::duration<double>(Clock::now() - begin).count());
        return true;
      });
  httplib::Response res;
  httplib::Error error;
  ASSERT_TRUE(client.send(req, res, error)) << httplib::to_string(error);
  EXPECT_EQ(res.status, 200);
  EXPECT_NE(received.find("data: [DONE]"), std::string::npos) << received;
  ASSERT_GE(at.size(), 3u) << received;
  // The first token within a token's time, the last after four of them:
  // buffered, every chunk would arrive at the end.
  EXPECT_LT(at.front(), 0.25);
  EXPECT_GT(at.back(), 1.1);
}

// Without affinity (a service whose credits count no prefix-cache hits),
// long generations are balanced by requests in flight per weight (nginx's
// least_conn), not by turns: a replica of weight 3 holds three times the
// streams of one of weight 1.
TEST_F(OpenAiProxyTest, BalancesStreamsInFlightByWeight) {
  EmulatedOpenAiReplica small({"small", "chat-a", "m", 20, 100});
  EmulatedOpenAiReplica large({"large", "chat-a", "m", 20, 100});
  ProxyConfig config{1,
                     {Llm("chat-a", "m",
                          {Backend("127.0.0.1", small.port(), 1),
                           Backend("127.0.0.1", large.port(), 3)})}};
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int k = 0; k < 8; ++k) {
    clients.emplace_back([&] {
      auto res = Post(Chat("chat-a", true));
      if (res && res->status == 200) ++ok;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int in_small = small.in_flight();
  int in_large = large.in_flight();
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(in_small + in_large, 8);
  EXPECT_EQ(in_small, 2);
  EXPECT_EQ(in_large, 6);
}

// A route change reloads nginx while streams are open: the old workers
// finish every stream they hold (nginx's graceful reload, bounded by the
// drain timeout) and the new configuration takes the next request (issue
// 75: reloads with streams open were not measured). Each of six streams
// gets all its tokens and its end.
TEST_F(OpenAiProxyTest, AReloadWithStreamsOpenLosesNone) {
  constexpr int kTokens = 15;
  EmulatedOpenAiReplica a({"a", "chat-a", "m", kTokens, 100});
  EmulatedOpenAiReplica b({"b", "chat-a", "m", kTokens, 100});
  ProxyConfig config{1,
                     {Llm("chat-a", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);
  constexpr int kStreams = 6;
  OpenStreams streams(port_, kStreams, "chat-a");
  // Every stream under way, then the route changes (a replica joins).
  AwaitInFlight(a, kStreams);
  ASSERT_EQ(a.in_flight(), kStreams);
  config.generation = 2;
  config.upstreams[0].backends.push_back(Backend("127.0.0.1", b.port(), 1));
  ASSERT_TRUE(nginx->Apply(config).ok());
  ASSERT_TRUE(WaitForGeneration("127.0.0.1", port_, 2, 10).ok());
  EXPECT_GT(a.in_flight(), 0);  // the reload came mid-stream
  auto next = Post(Chat("chat-a"));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  streams.Check(kTokens);
  EXPECT_EQ(a.hits() + b.hits(), kStreams + 1);
}

// Route changes while generations run longer than the drain timeout (issue
// 89: every reload cut the streams older than --drain-timeout, 30 s, and a
// client saw `terminated`): each change is applied within the drain
// timeout, and the old workers keep their streams to the end, up to
// --llm-idle-timeout. Short timeouts here, the same code path: 1 s of
// drain, streams of 5 s, four changes one after another.
TEST_F(OpenAiProxyTest, StreamsLongerThanTheDrainSurviveRepeatedRouteChanges) {
  constexpr int kTokens = 50;
  constexpr int kStreams = 8;
  setup_.drain_timeout = *Duration::Of(1);
  setup_.llm_idle_timeout = *Duration::Of(20);
  EmulatedOpenAiReplica a({"a", "chat-a", "m", kTokens, 100});
  EmulatedOpenAiReplica b({"b", "chat-a", "m", kTokens, 100});
  ProxyConfig config{1,
                     {Llm("chat-a", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  EXPECT_NE(
      RenderNginxConfig(config, setup_).find("worker_shutdown_timeout 20s;"),
      std::string::npos);
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);
  OpenStreams streams(port_, kStreams, "chat-a");
  AwaitInFlight(a, kStreams);
  ASSERT_EQ(a.in_flight(), kStreams);
  // Four changes, b joining and leaving: each applied within the drain
  // timeout and a little, while every stream is still open.
  for (int change = 0; change < 4; ++change) {
    config.generation += 1;
    if (change % 2 == 0) {
      config.upstreams[0].backends.push_back(Backend("127.0.0.1", b.port(), 1));
    } else {
      config.upstreams[0].backends.pop_back();
    }
    const Clock::time_point begin = Clock::now();
    ASSERT_TRUE(nginx->ApplyAndDrain(config).ok());
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - begin).count(), 3);
  }
  EXPECT_EQ(a.in_flight(), kStreams);  // past the drain, still streaming
  streams.Check(kTokens);
  // A proxy of DNN services alone bounds its old workers by the drain.
  ProxyConfig dnn{1, {Upstream("s", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  EXPECT_NE(RenderNginxConfig(dnn, setup_).find("worker_shutdown_timeout 1s;"),
            std::string::npos);
}

// A body the proxy will not read, or none, is answered with OpenAI's
// error object in every path (issue 89: past the limit the client got
// nginx's HTML 413, a chunked body near it 500, and no body "body too
// large"): 413 body_too_large, sized or chunked; 400 missing_body. A body
// just under the limit, sized or chunked, is routed.
TEST_F(OpenAiProxyTest, ABodyPastTheLimitOrNoneGetsAnOpenAiError) {
  setup_.llm_max_body_mb = 1;
  EmulatedOpenAiReplica a({"a", "chat-a", "m"});
  ProxyConfig config{1,
                     {Llm("chat-a", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);
  // A chat request of `bytes` bytes, its prompt padding it.
  auto sized = [](size_t bytes) {
    std::string head = R"({"model": "chat-a", "messages": [{"role": "user", )"
                       R"("content": ")";
    std::string tail = R"("}]})";
    return head + std::string(bytes - head.size() - tail.size(), 'x') + tail;
  };
  const size_t limit = 1 << 20;
  httplib::Client client("127.0.0.1", port_);
  auto send = [&](const std::string& body, bool chunked) {
    if (!chunked) {
      return client.Post("/v1/chat/completions", body, "application/json");
    }
    return client.Post(
        "/v1/chat/completions",
        [body](size_t offset, httplib::DataSink& sink) {
          size_t n = std::min<size_t>(64 * 1024, body.size() - offset);
          sink.write(body.data() + offset, n);
          if (offset + n == body.size()) sink.done();
          return true;
        },
        "application/json");
  };
  for (bool chunked : {false, true}) {
    auto under = send(sized(limit - 1024), chunked);
    ASSERT_TRUE(under) << chunked;
    EXPECT_EQ(under->status, 200) << chunked << ": " << under->body;
    auto over = send(sized(limit + 1024), chunked);
    ASSERT_TRUE(over) << chunked;
    EXPECT_EQ(over->status, 413) << chunked;
    nlohmann::json error = nlohmann::json::parse(over->body, nullptr, false);
    EXPECT_EQ(error["error"]["code"], "body_too_large") << over->body;
  }
  auto none = client.Post("/v1/chat/completions", "", "application/json");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 400);
  nlohmann::json error = nlohmann::json::parse(none->body, nullptr, false);
  EXPECT_EQ(error["error"]["code"], "missing_body") << none->body;
  EXPECT_EQ(a.hits(), 2);
}

// The body's top-level "model" is found by a scan, as JSON.parse would
// read it, whatever comes before it: a model after megabytes of messages,
// escaped, given twice (the last, as JSON's parsers keep), a "model" inside
// a message (not the body's), and bodies that are not JSON objects.
TEST_F(OpenAiProxyTest, TheModelIsFoundAsAJsonParserReadsIt) {
  setup_.llm_max_body_mb = 4;
  EmulatedOpenAiOptions oa{"a", "chat-a", "m"};
  oa.served = {"chat-a", "m", "chat-b"};
  EmulatedOpenAiReplica a(oa);
  ProxyConfig config{1,
                     {Llm("chat-a", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);
  std::string numbers = "[";
  for (int k = 0; k < 1000000; ++k) numbers += k ? ",1" : "1";
  numbers += "]";
  struct Body {
    std::string text;
    int status;
  } bodies[] = {
      {R"({"messages": )" + numbers + R"(, "model": "chat-a"})", 200},
      {R"({"model": "chat\u002da", "stream": false})", 200},
      {R"({"model": "nope", "messages": [{"model": "x"}], "model": "chat-a"})",
       200},
      {R"({"messages": [{"role": "user", "content": "say \"model\": \"q\""}],)"
       R"( "model" : "chat-a" })",
       200},
      {R"({"messages": [{"model": "chat-a"}]})", 404},
      {R"({"model": 5})", 404},
      {R"({})", 404},
      {R"([{"model": "chat-a"}])", 400},
      {R"({"model": "chat-a", "messages": [)", 400},
      {R"({"model": "chat-a"} x)", 400},
      {R"("chat-a")", 400},
  };
  httplib::Client client("127.0.0.1", port_);
  for (const Body& b : bodies) {
    auto res = client.Post("/v1/chat/completions", b.text, "application/json");
    ASSERT_TRUE(res) << b.text.substr(0, 80);
    EXPECT_EQ(res->status, b.status)
        << b.text.substr(0, 80) << ": " << res->body;
  }
  EXPECT_EQ(a.misrouted(), 0);
}

// Each large body holds its memory in the proxy while it is served: at
// most LargeBodiesAtOnce of them at once (here 2, of 4 MiB, in a memory
// limit of 114 MiB), the next answered 429 with OpenAI's error object, and
// a worker's memory grows by the bodies' text, not by their JSON's shape
// (issue 89: JSON.parse took 15 times a body's size).
TEST_F(OpenAiProxyTest, LargeBodiesAreBoundedInNumberAndInMemory) {
  setup_.llm_max_body_mb = 4;
  setup_.memory_limit_mb = 96 + 2 * (2 * 4 + 1);
  ASSERT_EQ(LargeBodiesAtOnce(setup_), 2);
  EmulatedOpenAiReplica a({"a", "chat-a", "m", 20, 100});
  ProxyConfig config{1,
                     {Llm("chat-a", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  auto nginx = StartNginx(config);
  ASSERT_TRUE(nginx);
  // The worker's peak resident memory, kB.
  auto peak_kb = [&] {
    std::string children;
    std::ifstream(fmt::format("/proc/{0}/task/{0}/children", nginx->pid())) >>
        children;
    std::ifstream status("/proc/" + children + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
    }
    return 0L;
  };
  std::string numbers = "[";
  while (numbers.size() < (3u << 20)) numbers += "1,";
  numbers += "1]";
  const std::string big = R"({"stream": true, "max_tokens": 20, "messages": )" +
                          numbers + R"(, "model": "chat-a"})";
  const long before_kb = peak_kb();
  std::vector<int> statuses(3, 0);
  std::vector<std::string> answers(3);
  std::vector<std::thread> clients;
  for (int k = 0; k < 3; ++k) {
    clients.emplace_back([&, k] {
      std::this_thread::sleep_for(std::chrono::milliseconds(400 * k));
      httplib::Client client("127.0.0.1", port_);
      // The emulated replica parses the 3 MiB body (slow under the
      // sanitizers).
      client.set_read_timeout(60);
      auto res = client.Post("/v1/chat/completions", big, "application/json");
      if (res) {
        statuses[k] = res->status;
        answers[k] = res->body;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(statuses[0], 200);
  EXPECT_EQ(statuses[1], 200);
  EXPECT_EQ(statuses[2], 429) << answers[2];
  nlohmann::json error = nlohmann::json::parse(answers[2], nullptr, false);
  EXPECT_EQ(error["error"]["code"], "too_many_large_bodies") << answers[2];
  // Two bodies of 3 MiB in flight: each at most its buffer, its text and
  // a MiB (LargeBodiesAtOnce's bound), not a parse.
  EXPECT_LT(peak_kb() - before_kb, 2 * (2 * 3 + 1) * 1024) << before_kb;
  // One after the others ended is taken again.
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(60);
  auto again = client.Post("/v1/chat/completions", big, "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

}  // namespace
}  // namespace migserve::proxy

namespace migserve::proxy {
namespace {

// `u` with its conversations kept to their replicas.
ProxyUpstream Affine(ProxyUpstream u) {
  u.affinity = true;
  return u;
}

// `sessions` conversations of `turns` turns each through the proxy on
// `port`, `clients` at a time, each turn's messages the conversation's so
// far (the earlier turns, the answer, the next question), as a chat client
// sends them. Returns how many were answered 200.
int Converse(int port, int sessions, int turns, int clients) {
  std::atomic<int> next{0}, ok{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      httplib::Client client("127.0.0.1", port);
      for (int k = next++; k < sessions; k = next++) {
        nlohmann::json messages = nlohmann::json::array(
            {{{"role", "system"}, {"content", "You are terse."}}});
        for (int turn = 0; turn < turns; ++turn) {
          messages.push_back(
              {{"role", "user"},
               {"content",
                fmt::format("question {} of conversation {}", turn, k)}});
          nlohmann::json body = {{"model", "chat-a"}, {"messages", messages}};
          auto res = client.Post("/v1/chat/completions", body.dump(),
                                 "application/json");
          if (!res || res->status != 200) continue;
          ++ok;
          messages.push_back({{"role", "assistant"}, {"content", "answer"}});
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return ok;
}

// Each replica's share of the follow-up turns whose earlier turns it
// served (its prefix cache holds them), all together.
double HitRate(const std::vector<std::unique_ptr<EmulatedOpenAiReplica>>& rs) {
  int hits = 0, follow_ups = 0;
  for (const auto& r : rs) {
    hits += r->prefix_hits();
    follow_ups += r->follow_ups();
  }
  return follow_ups > 0 ? static_cast<double>(hits) / follow_ups : 0;
}

// A multi-turn workload through the real nginx (issue 89: least_conn
// spread a conversation's turns over the pool, so a credit that counts
// prefix-cache hits counted hits the router could not deliver): with
// affinity (a service whose credits count them) every follow-up turn reaches
// the replica that served the conversation's earlier turns, as the credits'
// model has it (1 - what spills; nothing spills here), and the conversations
// spread over the replicas by weight; with `--llm-balancing least-conn` most do
// not.
TEST_F(OpenAiProxyTest, AConversationKeepsToTheReplicaHoldingItsPrefix) {
  constexpr int kSessions = 90, kTurns = 4;
  for (bool affinity : {true, false}) {
    SCOPED_TRACE(affinity ? "affinity" : "least-conn");
    setup_.llm_affinity = affinity;
    std::vector<std::unique_ptr<EmulatedOpenAiReplica>> replicas;
    std::vector<ProxyBackend> backends;
    for (long weight : {2, 1, 1}) {
      replicas.push_back(
          std::make_unique<EmulatedOpenAiReplica>(EmulatedOpenAiOptions{
              fmt::format("r{}", replicas.size()), "chat-a", "m", 2, 5}));
      backends.push_back(Backend("127.0.0.1", replicas.back()->port(), weight));
      backends.back().max_conns = 256;
    }
    auto nginx = StartNginx({1, {Affine(Llm("chat-a", "m", backends))}});
    ASSERT_TRUE(nginx);
    EXPECT_EQ(Converse(port_, kSessions, kTurns, 6), kSessions * kTurns);
    int follow_ups = 0;
    for (const auto& r : replicas) follow_ups += r->follow_ups();
    EXPECT_EQ(follow_ups, kSessions * (kTurns - 1));
    if (affinity) {
      EXPECT_GE(HitRate(replicas), 0.9);
      // 90 conversations on a ring of weights 2:1:1: 45, 22.5, 22.5
      // expected; each within what chance gives (3 sigma).
      EXPECT_NEAR(replicas[0]->hits(), 45 * kTurns, 15 * kTurns);
      EXPECT_NEAR(replicas[1]->hits(), 22.5 * kTurns, 13 * kTurns);
      EXPECT_NEAR(replicas[2]->hits(), 22.5 * kTurns, 13 * kTurns);
    } else {
      EXPECT_LT(HitRate(replicas), 0.6);
    }
    nginx.reset();
  }
}

// What names a conversation: the client's header, OpenAI's
// `prompt_cache_key` or `user`, else its leading messages up to the first
// user message (a shared system prompt alone names none); and a replica
// with its batch in flight passes a conversation on instead of queueing
// it, every replica full spilling to the fewest in flight.
TEST_F(OpenAiProxyTest, AConversationIsNamedAsClientsNameIt) {
  std::vector<std::unique_ptr<EmulatedOpenAiReplica>> replicas;
  std::vector<ProxyBackend> backends;
  for (int k = 0; k < 4; ++k) {
    replicas.push_back(std::make_unique<EmulatedOpenAiReplica>(
        EmulatedOpenAiOptions{fmt::format("r{}", k), "chat-a", "m", 2, 5}));
    backends.push_back(Backend("127.0.0.1", replicas.back()->port(), 1));
  }
  auto nginx = StartNginx({1, {Affine(Llm("chat-a", "m", backends))}});
  ASSERT_TRUE(nginx);
  // The replica that answers `body` (with `headers`).
  auto replica_of = [&](const nlohmann::json& body,
                        const httplib::Headers& headers = {}) {
    auto res = Post(body.dump(), headers);
    return res && res->status == 200 ? ReplicaOf(res->body) : "";
  };
  auto chat = [](const std::string& question) {
    return nlohmann::json{
        {"model", "chat-a"},
        {"messages",
         nlohmann::json::array({{{"role", "system"}, {"content", "shared"}},
                                {{"role", "user"}, {"content", question}}})}};
  };
  // Each way of naming a conversation: 24 different chats under one name
  // reach one replica.
  for (const char* way : {"header", "prompt_cache_key", "user"}) {
    SCOPED_TRACE(way);
    std::set<std::string> answered;
    for (int k = 0; k < 24; ++k) {
      nlohmann::json body = chat(fmt::format("q{}", k));
      httplib::Headers headers;
      if (std::string(way) == "header") {
        headers.emplace("migserve-session", "conversation-7");
      } else {
        body[way] = "conversation-7";
      }
      answered.insert(replica_of(body, headers));
    }
    EXPECT_EQ(answered.size(), 1u);
    EXPECT_NE(*answered.begin(), "");
  }
  // Without one, 24 chats that share only the system prompt spread.
  std::set<std::string> spread;
  for (int k = 0; k < 24; ++k)
    spread.insert(replica_of(chat(fmt::format("q{}", k))));
  EXPECT_GE(spread.size(), 3u);
  // A completion's prompt names it by its first characters.
  std::set<std::string> prompts;
  for (int k = 0; k < 8; ++k) {
    httplib::Client client("127.0.0.1", port_);
    auto res = client.Post(
        "/v1/completions",
        nlohmann::json({{"model", "chat-a"},
                        {"prompt", std::string(1024, 'x') + std::to_string(k)}})
            .dump(),
        "application/json");
    ASSERT_TRUE(res);
    prompts.insert(ReplicaOf(res->body));
  }
  EXPECT_EQ(prompts.size(), 1u);
}

// Bounded loads: a replica with its batch (max_conns) in flight passes the
// conversation's next request along the ring, and with every replica full
// the proxy still answers (the fewest in flight per weight takes it), not
// nginx's 502.
TEST_F(OpenAiProxyTest, AFullReplicaPassesAConversationOn) {
  EmulatedOpenAiReplica a({"a", "chat-a", "m", 30, 100});
  EmulatedOpenAiReplica b({"b", "chat-a", "m", 30, 100});
  std::vector<ProxyBackend> backends = {Backend("127.0.0.1", a.port(), 1),
                                        Backend("127.0.0.1", b.port(), 1)};
  for (ProxyBackend& backend : backends) backend.max_conns = 1;
  auto nginx = StartNginx({1, {Affine(Llm("chat-a", "m", backends))}});
  ASSERT_TRUE(nginx);
  httplib::Headers session = {{"migserve-session", "one"}};
  std::vector<int> statuses(3, 0);
  std::vector<std::thread> clients;
  for (int k = 0; k < 3; ++k) {
    clients.emplace_back([&, k] {
      auto res = Post(Chat("chat-a", true), session);
      if (res) statuses[k] = res->status;
    });
    // Each under way before the next.
    for (int i = 0; i < 100 && a.in_flight() + b.in_flight() < k + 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  EXPECT_EQ(a.in_flight() + b.in_flight(), 3);
  EXPECT_GE(a.in_flight(), 1);
  EXPECT_GE(b.in_flight(), 1);
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(statuses, std::vector<int>({200, 200, 200}));
}

}  // namespace
}  // namespace migserve::proxy
