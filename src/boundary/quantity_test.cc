#include "boundary/quantity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <type_traits>

namespace migserve {
namespace {

static_assert(!std::is_default_constructible_v<Rate>);
static_assert(!std::is_constructible_v<Duration, double>);

TEST(QuantityTest, OnlyFiniteValuesInTheirRangeAreMade) {
  EXPECT_EQ(Rate::Of(0)->value(), 0);
  EXPECT_EQ(Rate::Of(1e9)->value(), 1e9);
  EXPECT_EQ(Duration::Of(30)->value(), 30);
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {-1.0, 1.1e9, inf, -inf, std::nan("")}) {
    EXPECT_FALSE(Rate::Of(bad).ok()) << bad;
    EXPECT_FALSE(Duration::Of(bad).ok()) << bad;
  }
  EXPECT_EQ(Rate::Of(2e9).status().message(),
            "rate (req/s) must be from 0 to 1e+09, got 2000000000");
  EXPECT_EQ(Duration::Of(-1).status().message(),
            "duration (s) must be from 0 to 1e+09, got -1");
}

TEST(QuantityTest, TheLeastValueIsTheRangesFloor) {
  EXPECT_EQ(Rate::Least().value(), 0);
  EXPECT_EQ(Rate::Least(), Rate::Of(0).value());
  EXPECT_EQ(Duration::Least().value(), 0);
}

}  // namespace
}  // namespace migserve
