// What the Prometheus reader makes of answers no server should send: each
// is an error (Unavailable, or InvalidArgument for a refused query), never
// an exception or a crash; a well-formed matrix is read as it is.
#include "autoscale/prometheus_client.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

namespace migserve::autoscale {
namespace {

struct ResponseCase {
  std::string body;
  int http_status;
  Status::Code code;
  std::string message;
};

TEST(PrometheusClientTest, HostileAnswersAreErrorsNamingWhatIsWrong) {
  const std::vector<ResponseCase> cases = {
      {"", 200, Status::Code::kUnavailable, "HTTP 200, not the API's JSON"},
      {"<html>", 502, Status::Code::kUnavailable,
       "HTTP 502, not the API's JSON"},
      {"[]", 200, Status::Code::kUnavailable, "HTTP 200, not the API's JSON"},
      {R"({"status": 1})", 200, Status::Code::kUnavailable,
       "no error given ()"},
      {R"({"status": "error", "error": 7, "errorType": []})", 500,
       Status::Code::kUnavailable, "no error given ()"},
      {R"({"status": "error", "error": "parse error", "errorType": "bad_data"})",
       400, Status::Code::kInvalidArgument, "parse error (bad_data)"},
      {R"({"status": "success", "data": {"resultType": 3, "result": []}})", 200,
       Status::Code::kUnavailable, "the answer is not a matrix"},
      {R"({"status": "success", "data": {"resultType": "vector", "result": []}})",
       200, Status::Code::kUnavailable, "the answer is not a matrix"},
      {R"({"status": "success", "data": {"resultType": "matrix", "result": [{}]}})",
       200, Status::Code::kUnavailable, "a series has no values"},
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, "2", 3]]}]}})",
       200, Status::Code::kUnavailable, "a sample is not [time, \"value\"]"},
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [["1", "2"]]}]}})",
       200, Status::Code::kUnavailable, "a sample is not [time, \"value\"]"},
      {R"({"status": "success", "status": "success", "data": {}})", 200,
       Status::Code::kUnavailable, "HTTP 200, not the API's JSON"},
      {R"({"status": "success"})", 200, Status::Code::kUnavailable,
       "the answer has no data"},
      // A sample that is no number is the series' fault, not the
      // server's (issue 92: one such value failed the autoscaler's round
      // for every service): InvalidArgument, which the observer charges
      // to the one service.
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, 2]]}]}})",
       200, Status::Code::kInvalidArgument, "value 2 is not a string"},
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, "12abc"]]}]}})",
       200, Status::Code::kInvalidArgument,
       "value \"12abc\" is not a decimal number"},
      // strtod would take these for numbers (issue 76: "0x10" read as 16).
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, "0x10"]]}]}})",
       200, Status::Code::kInvalidArgument,
       "value \"0x10\" is not a decimal number"},
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, "inf"]]}]}})",
       200, Status::Code::kInvalidArgument,
       "value \"inf\" is not a decimal number"},
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, " 100 "]]}]}})",
       200, Status::Code::kInvalidArgument,
       "value \" 100 \" is not a decimal number"},
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, "1_000"]]}]}})",
       200, Status::Code::kInvalidArgument,
       "value \"1_000\" is not a decimal number"},
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, "Infinity"]]}]}})",
       200, Status::Code::kInvalidArgument,
       "value \"Infinity\" is not a decimal number"},
  };
  for (const ResponseCase& c : cases) {
    StatusOr<std::vector<PromSeries>> r =
        ParseQueryRange(c.body, c.http_status);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), c.code) << c.body;
    EXPECT_EQ(r.status().message(), c.message) << c.body;
  }
}

// A server that trickles its answer a byte at a time, or streams without
// end, is cut off at the limits, not waited for (issue 76: the autoscaler
// hung past 100 s on a byte every 0.5 s).
TEST(PrometheusClientTest, ATricklingOrEndlessServerIsCutOffAtTheLimits) {
  httplib::Server server;
  std::atomic<bool> stop = false;
  server.Get("/trickle/api/v1/query_range",
             [&](const httplib::Request&, httplib::Response& res) {
               res.set_chunked_content_provider(
                   "application/json", [&](size_t, httplib::DataSink& sink) {
                     std::this_thread::sleep_for(std::chrono::milliseconds(50));
                     return !stop && sink.write("{", 1);
                   });
             });
  server.Get("/endless/api/v1/query_range",
             [&](const httplib::Request&, httplib::Response& res) {
               res.set_chunked_content_provider(
                   "application/json", [&](size_t, httplib::DataSink& sink) {
                     static const std::string kBlock(64 << 10, ' ');
                     return !stop && sink.write(kBlock.data(), kBlock.size());
                   });
             });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  PrometheusLimits limits;
  limits.answer_deadline_s = 0.5;
  limits.max_answer_bytes = 1 << 20;
  for (const auto& [path, want] :
       {std::pair{"trickle", "the answer took more than 0.5 s"},
        std::pair{"endless", "the answer passed 1048576 bytes"}}) {
    auto client = PrometheusClient::Make(
        fmt::format("http://127.0.0.1:{}/{}", port, path), limits);
    ASSERT_TRUE(client.ok());
    auto begin = std::chrono::steady_clock::now();
    auto series = client->QueryRange("up", 0, 60, 15);
    double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count();
    ASSERT_FALSE(series.ok()) << path;
    EXPECT_EQ(series.status().code(), Status::Code::kUnavailable);
    EXPECT_NE(series.status().message().find(want), std::string::npos)
        << series.status().message();
    EXPECT_LT(took, 5) << path;
  }
  stop = true;
  server.stop();
  serving.join();
}

TEST(PrometheusClientTest, AMatrixIsReadWithItsLabelsAndSpecialValues) {
  StatusOr<std::vector<PromSeries>> r = ParseQueryRange(
      R"({"status": "success", "data": {"resultType": "matrix", "result": [
           {"metric": {"model": "bert", "n": 3},
            "values": [[10, "1.5"], [11, "NaN"], [12, "+Inf"], [13, "1e-320"]]}]}})",
      200);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  const PromSeries& s = r->front();
  EXPECT_EQ(s.labels, (std::map<std::string, std::string>{{"model", "bert"}}));
  ASSERT_EQ(s.samples.size(), 4u);
  EXPECT_EQ(s.samples[0].time_s, 10);
  EXPECT_EQ(s.samples[0].value, 1.5);
  EXPECT_TRUE(std::isnan(s.samples[1].value));
  EXPECT_TRUE(std::isinf(s.samples[2].value));
  EXPECT_EQ(s.samples[3].value, 1e-320);
}

}  // namespace
}  // namespace migserve::autoscale
