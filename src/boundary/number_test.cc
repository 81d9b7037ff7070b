#include "boundary/number.h"

#include <gtest/gtest.h>

#include <limits>

#include "boundary/csv.h"

namespace migserve {
namespace {

TEST(NumberTest, OnlyFiniteNumbersWithinTheRangePass) {
  EXPECT_EQ(OutOfRange(1e-3, kRateRange), "");
  EXPECT_EQ(OutOfRange(1e9, kRateRange), "");
  EXPECT_EQ(OutOfRange(1e-320, kRateRange),
            "must be from 0.001 to 1e+09, got 1e-320");
  EXPECT_EQ(OutOfRange(2e9, kRateRange),
            "must be from 0.001 to 1e+09, got 2000000000");
  EXPECT_EQ(OutOfRange(std::numeric_limits<double>::infinity(), kRateRange),
            "must be from 0.001 to 1e+09, got inf");
  EXPECT_EQ(OutOfRange(std::numeric_limits<double>::quiet_NaN(), kCostRange),
            "must be from 1e-06 to 1e+09, got nan");
  EXPECT_EQ(OutOfRange(0, kMemoryGbRange), "");
}

TEST(NumberTest, ParseDoubleRefusesInfinityAndNan) {
  double v = 0;
  for (const char* text : {"inf", "-inf", "nan", "infinity", "NAN", "1e999"}) {
    EXPECT_FALSE(ParseDouble(text, &v)) << text;
  }
  EXPECT_TRUE(ParseDouble("1e-320", &v));
  EXPECT_EQ(v, 1e-320);
}

}  // namespace
}  // namespace migserve
