// The stand-in's strategic merge patch against the cases of Kubernetes's
// docs ("Update API Objects in Place Using kubectl patch") and the
// directives `kubectl apply` writes.
#include <gtest/gtest.h>

#include "kube/testing/strategic_merge_patch.h"

namespace migserve::kube {
namespace {

using Json = nlohmann::json;

Json Patched(const char* original, const char* patch) {
  StatusOr<Json> out =
      StrategicMergePatch(Json::parse(original), Json::parse(patch));
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : Json();
}

TEST(StandInStrategicMergePatchTest,
     ContainersMergeByNameTolerationsAreReplaced) {
  // The docs' patch-file.yaml: a second container beside the first.
  EXPECT_EQ(Patched(R"({"spec": {"template": {"spec": {
                   "containers": [{"name": "a", "image": "redis"}],
                   "tolerations": [{"key": "x"}]}}}})",
                    R"({"spec": {"template": {"spec": {
                   "containers": [{"name": "b", "image": "nginx"}],
                   "tolerations": [{"key": "y"}]}}}})"),
            Json::parse(R"({"spec": {"template": {"spec": {
                   "containers": [{"name": "a", "image": "redis"},
                                  {"name": "b", "image": "nginx"}],
                   "tolerations": [{"key": "y"}]}}}})"));
}

TEST(StandInStrategicMergePatchTest, WhatKubectlApplySendsForANewImage) {
  EXPECT_EQ(
      Patched(R"({"metadata": {"name": "c", "labels": {"a": "1", "b": "2"}},
                  "spec": {"template": {"spec": {"containers": [
                    {"name": "c", "image": "old", "args": ["--x"],
                     "env": [{"name": "A", "value": "1"}],
                     "ports": [{"containerPort": 80}, {"containerPort": 90}]},
                    {"name": "d", "image": "same"}]}}}})",
              R"({"metadata": {"labels": {"b": null}},
                  "spec": {"template": {"spec": {
                    "$setElementOrder/containers": [{"name": "d"}, {"name": "c"}],
                    "containers": [{"name": "c", "image": "new",
                      "$setElementOrder/ports": [{"containerPort": 90},
                                                 {"containerPort": 80}],
                      "ports": [{"containerPort": 90, "name": "m"}]}]}}}})"),
      Json::parse(R"({"metadata": {"name": "c", "labels": {"a": "1"}},
                  "spec": {"template": {"spec": {"containers": [
                    {"name": "d", "image": "same"},
                    {"name": "c", "image": "new", "args": ["--x"],
                     "env": [{"name": "A", "value": "1"}],
                     "ports": [{"containerPort": 90, "name": "m"},
                               {"containerPort": 80}]}]}}}})"));
}

TEST(StandInStrategicMergePatchTest, Directives) {
  // An item deleted by its key; a map replaced; keys retained; a set of
  // finalizers merged and taken from.
  EXPECT_EQ(Patched(R"({"env": [{"name": "A"}, {"name": "B"}],
                        "m": {"a": 1, "b": 2}, "r": {"a": 1, "b": 2},
                        "metadata": {"finalizers": ["x", "y"]}})",
                    R"({"env": [{"$patch": "delete", "name": "A"}],
                        "m": {"$patch": "replace", "c": 3},
                        "r": {"$retainKeys": ["b", "c"], "c": 3},
                        "metadata": {"finalizers": ["z", "x"],
                          "$deleteFromPrimitiveList/finalizers": ["y"]}})"),
            Json::parse(R"({"env": [{"name": "B"}], "m": {"c": 3},
                            "r": {"b": 2, "c": 3},
                            "metadata": {"finalizers": ["x", "z"]}})"));
  EXPECT_FALSE(StrategicMergePatch(Json::parse(R"({"env": [{"name": "A"}]})"),
                                   Json::parse(R"({"env": [{"value": "1"}]})"))
                   .ok());
}

}  // namespace
}  // namespace migserve::kube
