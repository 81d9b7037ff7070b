// What the Prometheus reader makes of answers no server should send: each
// is an error (Unavailable, or InvalidArgument for a refused query), never
// an exception or a crash; a well-formed matrix is read as it is.
#include "autoscale/prometheus_client.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
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
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, 2]]}]}})",
       200, Status::Code::kUnavailable, "a value is not a string"},
      {R"({"status": "success", "data": {"resultType": "matrix",
           "result": [{"values": [[1, "12abc"]]}]}})",
       200, Status::Code::kUnavailable, "value '12abc' is not a number"},
  };
  for (const ResponseCase& c : cases) {
    StatusOr<std::vector<PromSeries>> r =
        ParseQueryRange(c.body, c.http_status);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), c.code) << c.body;
    EXPECT_EQ(r.status().message(), c.message) << c.body;
  }
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
