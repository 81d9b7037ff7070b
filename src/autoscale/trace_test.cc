#include "autoscale/trace.h"

#include <gtest/gtest.h>

namespace migserve::autoscale {
namespace {

TEST(RateTraceTest, EachRateHoldsUntilItsServicesNextRow) {
  RateTrace t = ParseRateTrace(
                    "time_s,service,rate\n"
                    "0,a,10\n0,b,20\n"
                    "60,a,15\n"  // b keeps 20
                    "120,b,5\n"
                    "180,a,0\n180,b,0\n",
                    "t.csv")
                    .value();
  EXPECT_EQ(t.services, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.times_s, (std::vector<double>{0, 60, 120, 180}));
  EXPECT_EQ(t.rates[1], (std::vector<double>{15, 20}));
  EXPECT_EQ(t.rates[2], (std::vector<double>{15, 5}));
  EXPECT_EQ(t.start_s(), 0);
  EXPECT_EQ(t.end_s(), 180);
  EXPECT_EQ(t.StepAt(59.9), 0u);
  EXPECT_EQ(t.StepAt(60), 1u);
  EXPECT_EQ(t.StepAt(-5), 0u);
  EXPECT_EQ(t.Find("b"), 1);
  EXPECT_EQ(t.Find("c"), -1);
}

TEST(RateTraceTest, ErrorsNameTheFileLineAndField) {
  struct Case {
    const char* text;
    const char* error;
  };
  for (const Case& c : {
           Case{"time_s,service\n0,a\n",
                "t.csv:1: header: missing column 'rate'"},
           Case{"time_s,service,rate\n0,a,-1\n60,a,1\n", "t.csv:2: rate: "},
           // A rate (boundary/quantity.h): at most 1e9 req/s.
           Case{"time_s,service,rate\n0,a,1\n60,a,2e9\n",
                "t.csv:3: rate: must be from 0 to 1e+09, got 2000000000"},
           Case{"time_s,service,rate\n60,a,1\n0,a,1\n",
                "t.csv:3: time_s: 0 is before the row above (60): rows go in "
                "time order"},
           Case{"time_s,service,rate\n0,a,1\n0,a,2\n60,a,1\n",
                "t.csv:3: service: a has a second rate at 0 s"},
           Case{"time_s,service,rate\n0,a,1\n60,b,1\n",
                "t.csv: service b has no rate at the first moment 0 s"},
           Case{"time_s,service,rate\n0,a,1\n",
                "t.csv: a trace needs rows at two moments at least"},
       }) {
    StatusOr<RateTrace> t = ParseRateTrace(c.text, "t.csv");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(t.status().message().rfind(c.error, 0), 0u)
        << t.status().message();
  }
}

}  // namespace
}  // namespace migserve::autoscale
