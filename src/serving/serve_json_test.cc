#include "serving/serve_json.h"

#include <gtest/gtest.h>

namespace migserve::serving {
namespace {

// What serve writes per service, report reads back whole; the quantiles,
// SLO and share within it are required.
TEST(ServeJsonTest, ReadsWhatItWritesAndNamesAMissingField) {
  ServiceServing s{"qa", 200, 100,  100,   4,    1000, 1100,  1100, 12.5,
                   10,   30,  80.5, 0.998, 99.7, 150,  0.667, true};
  nlohmann::ordered_json doc = {{"services", {ServiceJson(s)}}};
  auto read = ParseServeJson(doc.dump(), "s.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(ServiceJson((*read)[0]), ServiceJson(s));
  doc["services"][0].erase("p90_ms");
  read = ParseServeJson(doc.dump(), "s.json");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), "s.json: services[0].p90_ms: missing");
}

// An LLM service's token figures and their basis come back too.
TEST(ServeJsonTest, ReadsAnLlmServicesTokenFigures) {
  ServiceServing s{"chat", 30000, 4,     4,   2, 1000, 1000,  900, 9000,
                   8000,   11000, 12000, 1.0, 4, 6,    0.667, true};
  LlmServing llm;
  llm.ttft_slo_ms = 2000;
  llm.tpot_slo_ms = 30;
  llm.ttft_p50_ms = 130;
  llm.ttft_p99_ms = 400;
  llm.tpot_p50_ms = 24;
  llm.tpot_p99_ms = 29.5;
  llm.kv_occupancy = 0.25;
  llm.basis = "measured; calibrated on 3g.40gb";
  s.tokens = llm;
  nlohmann::ordered_json doc = {{"services", {ServiceJson(s)}}};
  auto read = ParseServeJson(doc.dump(), "s.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE((*read)[0].tokens.has_value());
  EXPECT_EQ((*read)[0].tokens->basis, llm.basis);
  EXPECT_EQ(ServiceJson((*read)[0]), ServiceJson(s));
  doc["services"][0]["llm"].erase("tpot_p99_ms");
  read = ParseServeJson(doc.dump(), "s.json");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(),
            "s.json: services[0].llm.tpot_p99_ms: missing");
}

}  // namespace
}  // namespace migserve::serving
