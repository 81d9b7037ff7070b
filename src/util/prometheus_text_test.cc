#include "util/prometheus_text.h"

#include <gtest/gtest.h>

namespace migserve {
namespace {

TEST(PrometheusTextTest, FamiliesThenSamplesWithEscapedLabels) {
  PrometheusText text;
  text.Family("migserve_things_total", "counter", "Things, by kind.");
  text.Sample("migserve_things_total", 3, {{"kind", "a"}, {"result", "ok"}});
  text.Sample("migserve_things_total", 0, {{"kind", "q\"}\n\\"}});
  text.Family("migserve_level", "gauge", "A level.");
  text.Sample("migserve_level", 0.25);
  text.Sample("migserve_level", 1e9);
  EXPECT_EQ(text.text(),
            "# HELP migserve_things_total Things, by kind.\n"
            "# TYPE migserve_things_total counter\n"
            "migserve_things_total{kind=\"a\",result=\"ok\"} 3\n"
            "migserve_things_total{kind=\"q\\\"}\\n\\\\\"} 0\n"
            "# HELP migserve_level A level.\n"
            "# TYPE migserve_level gauge\n"
            "migserve_level 0.25\n"
            "migserve_level 1000000000\n");
}

}  // namespace
}  // namespace migserve
