// The ServingTarget read and written as text, against the stand-in's
// custom resource rules: a spec write replaces the spec (keys dropped
// included) only if nobody wrote since the read; the autoscaler's state
// annotation moves no generation.
#include "kube/serving_target.h"

#include <gtest/gtest.h>

#include "boundary/input_file.h"
#include "kube/testing/api_server_standin.h"
#include "util/test_util.h"

namespace migserve::kube {
namespace {

using Json = nlohmann::json;

TEST(MergePatchBetweenTest, TurnsOneObjectIntoTheOther) {
  Json from = {{"a", 1}, {"b", {{"c", 2}, {"d", 3}}}, {"e", {1, 2}}};
  Json to = {{"b", {{"c", 2}, {"f", 4}}}, {"e", {2}}, {"g", "x"}};
  Json patch = MergePatchBetween(from, to);
  EXPECT_EQ(patch, (Json{{"a", nullptr},
                         {"b", {{"d", nullptr}, {"f", 4}}},
                         {"e", {2}},
                         {"g", "x"}}));
  Json applied = from;
  applied.merge_patch(patch);
  EXPECT_EQ(applied, to);
  EXPECT_EQ(MergePatchBetween(to, to), Json::object());
}

TEST(ServingTargetTextTest, WritesTheSpecOnlyIfUnchangedSinceRead) {
  ApiServerStandIn server({"", "", "", 1});
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(server.ApplyShipped("deploy/base/crd.yaml").ok());
  KubeClient client(server.ClientConfig());
  Json day = Json::parse(
      ReadFile(testing::SourcePath("data/deployments/day.json")).value());
  Json night = Json::parse(
      ReadFile(testing::SourcePath("data/deployments/night.json")).value());
  day["summary"] = {{"algorithm", "milp"}};
  night.erase("summary");
  ASSERT_TRUE(client
                  .Create(ServingTargetsPath("ns"),
                          {{"apiVersion", "migserve.io/v1alpha1"},
                           {"kind", "ServingTarget"},
                           {"metadata", {{"name", "t"}}},
                           {"spec", day}})
                  .ok());
  ServingTargetText spec(&client, "ns", "t");
  ServingTargetText state(&client, "ns", "t",
                          LabelKey("migserve.io/autoscale-state"));
  // Nothing read, no version: no write (issue 92: a target read without
  // a resourceVersion was written unconditionally).
  Status unread = spec.Write(night.dump());
  EXPECT_EQ(unread.code(), Status::Code::kFailedPrecondition)
      << unread.ToString();
  EXPECT_EQ(server.Get(ServingTargetPath("ns", "t")).value()["spec"], day);
  EXPECT_EQ(spec.Describe(), "servingtarget ns/t");
  EXPECT_EQ(state.Describe(),
            "servingtarget ns/t annotation migserve.io/autoscale-state");
  auto read = spec.Read();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(Json::parse(*read), day);
  auto missing = state.Read();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "servingtarget ns/t annotation migserve.io/autoscale-state: "
            "missing");

  ASSERT_TRUE(state.Put("{\"low_since\": {}}").ok());
  EXPECT_EQ(state.Read().value(), "{\"low_since\": {}}");
  // The annotation moved the object's version: the spec write is refused.
  Status stale = spec.Write(night.dump());
  EXPECT_EQ(stale.code(), Status::Code::kAborted) << stale.ToString();
  ASSERT_TRUE(spec.Read().ok());
  ASSERT_TRUE(spec.Write(night.dump()).ok());
  Json stored = server.Get(ServingTargetPath("ns", "t")).value();
  EXPECT_EQ(stored["spec"], night);  // the summary gone with it
  EXPECT_EQ(stored["metadata"]["generation"], 2);
  EXPECT_EQ(stored["metadata"]["annotations"]["migserve.io/autoscale-state"],
            "{\"low_since\": {}}");
}

}  // namespace
}  // namespace migserve::kube
