// What the observer makes of numbers no rate or latency can be, asked of a
// real Prometheus server (Debian's, on 127.0.0.1) through each service's
// own queries: PromQL literals give exactly the value under test at every
// step. A series with one absurd sample is not observed, and the problem
// names the service, the query and the value; NaN steps are unknown; a
// tiny but valid rate is a rate; one bad service leaves the others
// observed.
#include "autoscale/observer.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "autoscale/prometheus_client.h"
#include "autoscale/testing/local_prometheus.h"
#include "autoscale/testing/triton_endpoint.h"
#include "util/testing/http_listener.h"
#include "util/unix_time.h"

namespace migserve::autoscale {
namespace {

struct Case {
  std::string rate_query;
  std::string p99_query;  // "" : the default (gives nothing here)
  double rate;            // NaN: not observed
  double p99_ms;          // NaN: none
  std::string problem;    // "" : none; else a part of the service's problem
};

TEST(ObserverTest, NumbersNoRateOrLatencyCanBeAreNamedAndIgnored) {
  const std::vector<Case> cases = {
      {"vector(500)", "vector(50)", 500, 50, ""},
      {"vector(0)", "", 0, NAN, ""},
      {"vector(-0)", "", 0, NAN, ""},
      {"vector(1e-320)", "", 1e-320, NAN, ""},
      {"vector(1e9)", "", 1e9, NAN, ""},
      {"vector(1e308)", "", NAN, NAN,
       "vector(1e308) gave 1e+308 req/s, which must be from 0 to 1e+09; the "
       "series is ignored"},
      {"vector(1.5e9)", "", NAN, NAN, "gave 1.5e+09 req/s"},
      {"vector(-5)", "", NAN, NAN,
       "vector(-5) gave -5 req/s, which must be from 0 to 1e+09"},
      {"vector(+Inf)", "", NAN, NAN, "gave inf req/s"},
      {"vector(-Inf)", "", NAN, NAN, "gave -inf req/s"},
      {"vector(NaN)", "", NAN, NAN,
       "vector(NaN) gave no number (NaN) in the window"},
      {"vector(100)", "vector(+Inf)", 100, NAN,
       "vector(+Inf) gave a p99 of inf ms, which must be from 0.001 to "
       "1e+07; ignored"},
      {"vector(100)", "vector(0)", 100, NAN, "gave a p99 of 0 ms"},
      {"vector(100)", "vector(-3)", 100, NAN, "gave a p99 of -3 ms"},
      {"vector(100)", "vector(NaN)", 100, NAN, "gave a p99 of nan ms"},
  };
  auto prometheus = LocalPrometheus::Start({});
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().ToString();
  StatusOr<PrometheusClient> client =
      PrometheusClient::Make((*prometheus)->url());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::vector<workload::Service> services;
  for (size_t k = 0; k < cases.size(); ++k) {
    workload::Service s;
    s.name = "s" + std::to_string(k);
    s.observe.rate = cases[k].rate_query;
    s.observe.p99_ms = cases[k].p99_query;
    services.push_back(s);
  }
  ObserveOptions options;
  options.step_s = 1;
  const double now = std::floor(UnixNow());
  StatusOr<Observed> observed = Observe(*client, services, options, now, 3);
  ASSERT_TRUE(observed.ok()) << observed.status().ToString();
  ASSERT_EQ(observed->window.size(), 3u);
  const Observation& last = observed->window.back();
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    SCOPED_TRACE(c.rate_query + " " + c.p99_query);
    if (std::isnan(c.rate)) {
      for (const Observation& o : observed->window) {
        EXPECT_TRUE(std::isnan(o.rates[k])) << o.rates[k];
      }
    } else {
      EXPECT_EQ(last.rates[k], c.rate);
    }
    if (std::isnan(c.p99_ms)) {
      EXPECT_TRUE(std::isnan(last.p99_ms[k])) << last.p99_ms[k];
    } else {
      EXPECT_EQ(last.p99_ms[k], c.p99_ms);
    }
    int named = 0;
    for (const std::string& p : observed->problems) {
      if (p.starts_with(services[k].name + ": ")) {
        ++named;
        EXPECT_NE(p.find(c.problem), std::string::npos) << p;
      }
    }
    EXPECT_EQ(named, c.problem.empty() ? 0 : 1);
  }
}

// An LLM service's default queries are vLLM's (docs/llm.md), and a real
// Prometheus takes them: with no replica scraped, the rate has no series
// and the problem names the query.
TEST(ObserverTest, AnLlmServiceIsObservedOnVllmsMetrics) {
  auto prometheus = LocalPrometheus::Start({});
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().ToString();
  StatusOr<PrometheusClient> client =
      PrometheusClient::Make((*prometheus)->url());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  workload::Service chat;
  chat.name = "chat";
  chat.kind = *workload::ParseServiceKind("llm");
  chat.tokens = llm::LlmTerms{2000, 100, 1024, 256, 0, 0, 0};
  ObserveOptions options;
  options.step_s = 1;
  StatusOr<Observed> observed =
      Observe(*client, {chat}, options, std::floor(UnixNow()), 3);
  ASSERT_TRUE(observed.ok()) << observed.status().ToString();
  ASSERT_EQ(observed->problems.size(), 1u);
  EXPECT_EQ(observed->problems[0],
            "chat: no series for sum(sum by (instance) "
            "(rate(vllm:request_success_total{migserve_service=\"chat\"}"
            "[1m]))) and on() (count(sum by (instance) "
            "(rate(vllm:request_success_total{migserve_service=\"chat\"}"
            "[1m]))) == count(sum by (instance) "
            "(vllm:request_success_total{migserve_service=\"chat\"})))");
  // The p99's default is silent where it gives nothing; as a service's own
  // query Prometheus parses it and answers no series.
  workload::Service own = chat;
  own.name = "own";
  own.observe = {"vector(1)", VllmP99Query("chat", options)};
  observed = Observe(*client, {own}, options, std::floor(UnixNow()), 3);
  ASSERT_TRUE(observed.ok()) << observed.status().ToString();
  ASSERT_EQ(observed->problems.size(), 1u);
  EXPECT_EQ(observed->problems[0],
            "own: no series for 1000 * histogram_quantile(0.99, sum by (le) "
            "(rate(vllm:e2e_request_latency_seconds_bucket{migserve_service="
            "\"chat\"}[1m])))");
  // The token p99s' queries too: Prometheus parses each (a query it
  // refused would be named as such, not as giving no series).
  for (const std::string& query :
       {VllmTtftP99Query("chat", options), VllmTpotP99Query("chat", options)}) {
    own.observe = {"vector(1)", query};
    observed = Observe(*client, {own}, options, std::floor(UnixNow()), 3);
    ASSERT_TRUE(observed.ok()) << observed.status().ToString();
    ASSERT_EQ(observed->problems.size(), 1u);
    EXPECT_EQ(observed->problems[0], "own: no series for " + query);
  }
}

// An LLM service's p99 for the policy is its worst p99 as a share of that
// p99's SLO, on the request latency's scale; what was not observed takes
// no part.
TEST(ObserverTest, AnLlmServiceIsJudgedByItsWorstTokenP99) {
  llm::LlmTerms terms{2000, 100, 1024, 256, 0, 0, 27600};
  // TTFT at 95% of its SLO, the rest at half theirs.
  EXPECT_DOUBLE_EQ(LlmP99Ms(terms, 27600, 13800, 1900, 50), 0.95 * 27600);
  // TPOT over its SLO.
  EXPECT_DOUBLE_EQ(LlmP99Ms(terms, 27600, 13800, 500, 120), 1.2 * 27600);
  EXPECT_DOUBLE_EQ(LlmP99Ms(terms, 27600, 13800, std::nan(""), std::nan("")),
                   13800);
  EXPECT_DOUBLE_EQ(LlmP99Ms(terms, 27600, std::nan(""), 1000, std::nan("")),
                   0.5 * 27600);
  EXPECT_TRUE(std::isnan(
      LlmP99Ms(terms, 27600, std::nan(""), std::nan(""), std::nan(""))));
}

// The default rate counts inferences, the unit of a workload's rates: a
// replica serving 100 requests/s of 4 samples each is observed at 400.
TEST(ObserverTest, TheDefaultRateCountsSamplesNotRequests) {
  TritonEndpoint replica("bert");
  replica.SetRate(100);
  replica.SetBatch(4);
  auto prometheus = LocalPrometheus::Start(
      {{replica.address(), {{"migserve_service", "bert-1"}}}});
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().ToString();
  StatusOr<PrometheusClient> client =
      PrometheusClient::Make((*prometheus)->url());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  workload::Service bert;
  bert.name = "bert-1";
  ObserveOptions options;
  options.step_s = 1;
  options.rate_window = "3s";
  double rate = std::nan("");
  // Until the rate's window is full of scrapes (it rises to the rate as it
  // fills); counting requests it would stay near 100.
  for (int k = 0; k < 60 && !(rate > 360); ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    StatusOr<Observed> observed =
        Observe(*client, {bert}, options, UnixNow(), 1);
    ASSERT_TRUE(observed.ok()) << observed.status().ToString();
    rate = observed->window.back().rates[0];
  }
  EXPECT_NEAR(rate, 400, 40);
}

// A value no Prometheus writes (a broken exporter behind a recording rule,
// a proxy in front of the server) fails the one service whose query gave
// it, named, and no other (issue 92: one such value failed the round for
// every service). Only a hostile server gives one, so one answers here:
// the series of a query naming "bad" carries " 100 ".
TEST(ObserverTest, AValueThatIsNoNumberFailsOnlyItsService) {
  httplib::Server server;
  server.Get("/api/v1/query_range", [](const httplib::Request& req,
                                       httplib::Response& res) {
    const std::string query = req.get_param_value("query");
    const double end = std::stod(req.get_param_value("end"));
    const std::string value =
        query.find("bad") != std::string::npos ? " 100 " : "5";
    nlohmann::json answer = {
        {"status", "success"},
        {"data",
         {{"resultType", "matrix"},
          {"result",
           nlohmann::json::array(
               {{{"metric", nlohmann::json::object()},
                 {"values", nlohmann::json::array(
                                {nlohmann::json::array({end, value})})}}})}}}};
    res.set_content(answer.dump(), "application/json");
  });
  int port = 0;
  std::thread listener = testing::ListenOnLocalPort(&server, &port);
  ASSERT_GT(port, 0);
  StatusOr<PrometheusClient> client =
      PrometheusClient::Make(fmt::format("http://127.0.0.1:{}", port));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::vector<workload::Service> services(3);
  services[0].name = "good";
  services[0].observe.rate = "good_rate";
  services[1].name = "broken";
  services[1].observe.rate = "bad_rate";
  services[2].name = "slow";
  services[2].observe.rate = "good_rate";
  services[2].observe.p99_ms = "bad_p99";
  ObserveOptions options;
  options.step_s = 1;
  const double now = std::floor(UnixNow());
  StatusOr<Observed> observed = Observe(*client, services, options, now, 1);
  server.stop();
  listener.join();
  ASSERT_TRUE(observed.ok()) << observed.status().ToString();
  const Observation& last = observed->window.back();
  EXPECT_EQ(last.rates[0], 5);
  EXPECT_TRUE(std::isnan(last.rates[1]));
  EXPECT_EQ(last.rates[2], 5);
  EXPECT_TRUE(std::isnan(last.p99_ms[2]));
  ASSERT_EQ(observed->problems.size(), 2u);
  EXPECT_TRUE(observed->problems[0].starts_with("broken: "))
      << observed->problems[0];
  EXPECT_NE(observed->problems[0].find("value \" 100 \" is not a decimal "
                                       "number"),
            std::string::npos)
      << observed->problems[0];
  EXPECT_TRUE(observed->problems[1].starts_with("slow: "))
      << observed->problems[1];
}

}  // namespace
}  // namespace migserve::autoscale
