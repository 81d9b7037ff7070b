#include "kube/labels.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

namespace migserve::kube {
namespace {

constexpr char kApp[] = "app";
constexpr char kService[] = "migserve.io/service";
constexpr char kOther[] = "example.com/other";

// The keys Kubernetes takes (apimachinery's IsQualifiedName), decided when
// compiled.
static_assert(IsQualifiedName("app"));
static_assert(IsQualifiedName("app.kubernetes.io/managed-by"));
static_assert(IsQualifiedName("migserve.io/lease-epoch"));
static_assert(IsQualifiedName("a_b.C-d"));
static_assert(!IsQualifiedName(""));
static_assert(!IsQualifiedName("/name"));
static_assert(!IsQualifiedName("prefix/"));
static_assert(!IsQualifiedName("Upper.io/name"));  // a prefix is lowercase
static_assert(!IsQualifiedName("-name"));
static_assert(!IsQualifiedName("name-"));
static_assert(!IsQualifiedName("a/b/c"));
static_assert(!IsQualifiedName("na me"));
static_assert(!IsQualifiedName(
    "x1234567890123456789012345678901234567890123456789012345678901234"));
// A key is only a constant: no key can be made from text read at run time.
static_assert(!std::is_constructible_v<LabelKey, std::string>);
static_assert(!std::is_constructible_v<LabelKey, std::string_view>);
// A value only by its check.
static_assert(!std::is_default_constructible_v<LabelValue>);
static_assert(!std::is_constructible_v<LabelValue, std::string>);

LabelValue Value(std::string_view text) {
  return LabelValue::Parse(text).value();
}

TEST(LabelsTest, AValueIsWhatKubernetesTakes) {
  for (const char* good :
       {"bert", "a_b", "A.b-c", "0", "1g.10gb-me",
        "x12345678901234567890123456789012345678901234567890123456789012"}) {
    EXPECT_TRUE(LabelValue::Parse(good).ok()) << good;
  }
  for (const char* bad :
       {"", "1g.10gb+me", "-a", "a-", "a b", "a;b", "a\nb", "a/b",
        "x123456789012345678901234567890123456789012345678901234567890123"}) {
    EXPECT_FALSE(LabelValue::Parse(bad).ok()) << bad;
  }
  Status named = ParseLabelValue("n 1", "node of GPU n 1/0").status();
  EXPECT_EQ(named.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(named.message().rfind("node of GPU n 1/0: label value must be", 0),
            0u)
      << named.message();
}

TEST(LabelsTest, KeepTheOrderSetAndASecondSetReplacesInPlace) {
  Labels labels;
  labels.Set(kService, Value("bert")).Set(kApp, Value("web"));
  labels.Set(kService, Value("gpt"));
  EXPECT_EQ(labels.ToJson().dump(),
            R"({"migserve.io/service":"gpt","app":"web"})");
  EXPECT_EQ(Labels().ToJson().dump(), "{}");
}

TEST(LabelsTest, AnnotationsTakeAnyTextUnderAConstantKey) {
  Annotations notes;
  EXPECT_TRUE(notes.empty());
  notes.Set(kOther, "{\"a\": 1}\n").Set(kApp, "");
  EXPECT_FALSE(notes.empty());
  EXPECT_EQ(notes.ToJson().dump(),
            R"({"example.com/other":"{\"a\": 1}\n","app":""})");
  EXPECT_EQ(
      notes.Patch().dump(),
      R"({"metadata":{"annotations":{"app":"","example.com/other":"{\"a\": 1}\n"}}})");
}

// A key per GPU: a constant and an index, and nothing else.
TEST(LabelsTest, AnIndexedKeyIsAConstantAndAWholeNumber) {
  EXPECT_EQ(IndexedKey(kService, 0), "migserve.io/service-0");
  EXPECT_EQ(IndexedKey(kApp, 17), "app-17");
  Annotations notes;
  notes.SetIndexed(kService, 3, "x")
      .Set(kApp, "y")
      .SetIndexed(kService, 3, "z");
  EXPECT_EQ(notes.ToJson().dump(),
            R"({"migserve.io/service-3":"z","app":"y"})");
  EXPECT_DEATH(IndexedKey(kApp, -1), "app--1 is not a Kubernetes key");
  static constexpr char kLongest[] =
      "x12345678901234567890123456789012345678901234567890123456789012";
  EXPECT_DEATH(IndexedKey(kLongest, 1), "is not a Kubernetes key");
}

TEST(LabelsTest, ASelectorIsEncodedForAQuery) {
  Labels labels;
  labels.Set(kApp, Value("web")).Set(kService, Value("a_b.c"));
  LabelSelector selector(labels);
  selector.Has(kOther).Lacks(kApp);
  EXPECT_EQ(selector.str(),
            "app=web,migserve.io/service=a_b.c,example.com/other,!app");
  EXPECT_EQ(selector.Query(),
            "labelSelector=app%3Dweb%2Cmigserve.io%2Fservice%3Da_b.c%2C"
            "example.com%2Fother%2C%21app");
  EXPECT_EQ(LabelSelector().Query(), "labelSelector=");
}

}  // namespace
}  // namespace migserve::kube
