#include "boundary/yaml_map.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "util/interrupt.h"

namespace migserve {
namespace {

YamlMap Root(const std::string& text) {
  auto node = ParseYaml(text, "w.yaml");
  EXPECT_TRUE(node.ok()) << node.status().ToString();
  auto map = YamlMap::Open(*node, "w.yaml", "");
  EXPECT_TRUE(map.ok()) << map.status().ToString();
  return *map;
}

// Asked to stop before a document is read, ParseYaml reads nothing: a
// region's workload takes seconds that no signal could cut short once
// begun before the signal (a second read after the credits took 3.3 s to
// end on SIGTERM).
TEST(YamlMapTest, NothingIsReadOnceAStopWasAsked) {
  RequestInterrupt();
  auto parsed = ParseYaml("a: 1\n", "w.yaml");
  ClearInterrupt();
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), Status::Code::kAborted);
  EXPECT_EQ(parsed.status().message(), "w.yaml: interrupted before reading it");
  EXPECT_TRUE(ParseYaml("a: 1\n", "w.yaml").ok());
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

// A "billion laughs": nine levels of nine aliases each, 387 bytes that
// expand to 9^9 nodes. Refused with the line where the limit was reached,
// after kMinYamlVisits visits, not after the memory ran out.
TEST(YamlMapTest, AnAliasBombIsRefused) {
  std::string bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    bomb += fmt::format("{0}: &{0} [", c);
    for (int k = 0; k < 9; ++k)
      bomb += fmt::format("{}*{}", k ? ", " : "", char(c - 1));
    bomb += "]\n";
  }
  auto parsed = ParseYaml(bomb, "bomb.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message().rfind("bomb.yaml:", 0), 0u);
  EXPECT_NE(parsed.status().message().find(
                "the document expands to more than 100000 nodes through its "
                "aliases (an alias bomb?)"),
            std::string::npos)
      << parsed.status().message();
  // Anchors used as a configuration uses them are read.
  EXPECT_TRUE(ParseYaml("base: &b {model: bert, latency_ms: 100}\n"
                        "services:\n  - *b\n  - *b\n",
                        "ok.yaml")
                  .ok());
}

TEST(YamlMapTest, AKeyGivenTwiceIsRefusedWithBothLines) {
  auto parsed = ParseYaml(
      "gpu: A100-SXM4-80GB\nservices:\n  - name: a\n    throughput: 10\n"
      "    throughput: 1e9\n",
      "w.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "w.yaml:5: key 'throughput' given twice (first at line 4)");
  EXPECT_EQ(ParseYaml("a: 1\na: 2\n", "x.yaml").status().message(),
            "x.yaml:2: key 'a' given twice (first at line 1)");
}

TEST(YamlMapTest, NestingDeeperThanTheLimitIsRefused) {
  std::string deep(kMaxYamlDepth + 1, '[');
  deep += std::string(kMaxYamlDepth + 1, ']') + "\n";
  auto parsed = ParseYaml(deep, "deep.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(
      parsed.status().message(),
      fmt::format("deep.yaml:1: nested deeper than {} levels", kMaxYamlDepth));
  std::string fits(kMaxYamlDepth, '[');
  fits += std::string(kMaxYamlDepth, ']') + "\n";
  EXPECT_TRUE(ParseYaml(fits, "fits.yaml").ok());
}

}  // namespace
}  // namespace migserve
