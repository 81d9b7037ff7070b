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

}  // namespace
}  // namespace migserve::serving
