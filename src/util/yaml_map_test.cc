#include "util/yaml_map.h"

#include <gtest/gtest.h>

namespace migserve {
namespace {

YamlMap Root(const std::string& text) {
  auto node = ParseYaml(text, "w.yaml");
  EXPECT_TRUE(node.ok()) << node.status().ToString();
  auto map = YamlMap::Open(*node, "w.yaml", "");
  EXPECT_TRUE(map.ok()) << map.status().ToString();
  return *map;
}

TEST(YamlMapTest, TypeErrorNamesFileLineAndField) {
  YamlMap map = Root("gpu: A100\nmax_procs: two\n");
  int procs = 1;
  Status s = map.Optional("max_procs", &procs);
  EXPECT_EQ(s.message(), "w.yaml:2: max_procs: expected an integer, got 'two'");
  EXPECT_EQ(procs, 1);
}

TEST(YamlMapTest, MissingRequiredFieldNamesMapLine) {
  auto node = ParseYaml("services:\n  - {name: a}\n", "w.yaml");
  ASSERT_TRUE(node.ok());
  auto item = YamlMap::Open((*node)["services"][0], "w.yaml", "services[0]");
  ASSERT_TRUE(item.ok());
  double tput = 0;
  EXPECT_EQ(item->Required("throughput", &tput).message(),
            "w.yaml:2: services[0].throughput: missing");
}

TEST(YamlMapTest, NumbersAreFiniteAndWithinTheirRange) {
  YamlMap map = Root("a: .inf\nb: .nan\nc: 1e-320\nd: 5\n");
  double v = 0;
  EXPECT_EQ(map.Required("a", &v).message(),
            "w.yaml:1: a: expected a finite number, got '.inf'");
  EXPECT_EQ(map.Optional("b", &v).message(),
            "w.yaml:2: b: expected a finite number, got '.nan'");
  EXPECT_EQ(map.Required("c", &v, kRateRange).message(),
            "w.yaml:3: c: must be from 0.001 to 1e+09, got 1e-320");
  EXPECT_TRUE(map.Required("d", &v, kRateRange).ok());
  EXPECT_EQ(v, 5);
  v = -1;  // an absent optional field keeps its value, unchecked
  EXPECT_TRUE(map.Optional("e", &v, kRateRange).ok());
  EXPECT_EQ(v, -1);
}

TEST(YamlMapTest, SyntaxErrorAndUnknownKey) {
  auto bad = ParseYaml("a: [1, 2\n", "x.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("x.yaml:", 0), 0u);
  YamlMap map = Root("gpu: A\nlatency_budgt: 1\n");
  EXPECT_EQ(map.CheckKeys({"gpu", "latency_budget"}).message(),
            "w.yaml:2: latency_budgt: unknown field (expected one of: gpu, "
            "latency_budget)");
}

}  // namespace
}  // namespace migserve
