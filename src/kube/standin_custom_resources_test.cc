// The stand-in API server serves custom resources as a real one does, so
// that the controller's ServingTarget (deploy/base/crd.yaml) is tested
// against the rules it meets on a cluster: the schema checked on every
// write (a bad object refused naming the field), status written only
// through /status, spec writes bumping metadata.generation, discovery and
// the printer columns kubectl shows.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>

#include "boundary/input_file.h"
#include "kube/kube_client.h"
#include "kube/testing/api_server_standin.h"
#include "kube/testing/custom_resources.h"
#include "util/test_util.h"

namespace migserve::kube {
namespace {

using Json = nlohmann::json;

constexpr char kTargets[] =
    "/apis/migserve.io/v1alpha1/namespaces/replicas/servingtargets";

Json Target(int start) {
  return {{"apiVersion", "migserve.io/v1alpha1"},
          {"kind", "ServingTarget"},
          {"metadata", {{"name", "day"}}},
          {"spec",
           {{"gpu", "A100-SXM4-80GB"},
            {"services", {{{"name", "bert"}, {"throughput", 90}}}},
            {"gpus",
             {{{"id", 0},
               {"instances",
                {{{"profile", "1g.10gb"},
                  {"start", start},
                  {"service", "bert"}}}}}}}}}};
}

class StandInCustomResourcesTest : public ::testing::Test {
 protected:
  StandInCustomResourcesTest() : server_({"", "", "", 5}) {}

  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    ASSERT_TRUE(server_.ApplyShipped("deploy/base/crd.yaml").ok());
    client_ = std::make_unique<KubeClient>(server_.ClientConfig("replicas"));
  }

  ApiServerStandIn server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(StandInCustomResourcesTest, ABadSpecIsRefusedNamingTheField) {
  auto refused = client_->Create(kTargets, Target(9));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "ServingTarget.migserve.io \"day\" is invalid: "
                "spec.gpus[0].instances[0].start: Invalid value: 9: "
                "spec.gpus[0].instances[0].start in body should be less than "
                "or equal to 7"),
            std::string::npos)
      << refused.status().message();
  Json missing = Target(0);
  missing["spec"].erase("gpus");
  missing["spec"]["services"][0]["throughput"] = "fast";
  refused = client_->Create(kTargets, missing);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "[spec.gpus: Required value, spec.services[0].throughput: "
                "Invalid value: \"string\": spec.services[0].throughput in "
                "body must be of type number: \"string\"]"),
            std::string::npos)
      << refused.status().message();
  EXPECT_FALSE(server_.Get(std::string(kTargets) + "/day"));
}

TEST_F(StandInCustomResourcesTest, StatusOnlyThroughItsSubresource) {
  Json target = Target(0);
  target["status"] = {{"stage", "forged"}};
  auto made = client_->Create(kTargets, target);
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_FALSE(made->contains("status"));
  EXPECT_EQ((*made)["metadata"]["generation"], 1);
  EXPECT_TRUE((*made)["metadata"].contains("creationTimestamp"));
  EXPECT_EQ((*made)["metadata"]["namespace"], "replicas");
  std::string path = std::string(kTargets) + "/day";

  // A write of the object leaves its status; one of the status its spec.
  auto patched = client_->Patch(path, {{"status", {{"stage", "forged"}}}});
  ASSERT_TRUE(patched.ok());
  EXPECT_FALSE(patched->contains("status"));
  EXPECT_EQ((*patched)["metadata"]["generation"], 1);
  patched = client_->Patch(
      path + "/status",
      {{"status", {{"stage", "idle"}}}, {"spec", {{"gpu", "H100-SXM5-80GB"}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().message();
  EXPECT_EQ((*patched)["status"]["stage"], "idle");
  EXPECT_EQ((*patched)["spec"]["gpu"], "A100-SXM4-80GB");
  EXPECT_EQ((*patched)["metadata"]["generation"], 1);

  // A spec change bumps the generation; the status is kept.
  patched = client_->Patch(path, {{"spec", {{"gpu", "H100-SXM5-80GB"}}}});
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ((*patched)["metadata"]["generation"], 2);
  EXPECT_EQ((*patched)["metadata"]["namespace"], "replicas");
  EXPECT_EQ((*patched)["status"]["stage"], "idle");
  // The status is checked as well.
  auto refused =
      client_->Patch(path + "/status", {{"status", {{"gpusHeld", -1}}}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("status.gpusHeld: Invalid value"),
            std::string::npos)
      << refused.status().message();
}

TEST_F(StandInCustomResourcesTest, UnknownFieldsArePrunedOrRefusedIfStrict) {
  Json target = Target(0);
  target["spec"]["replicas"] = 3;
  target["spec"]["gpus"][0]["instances"][0]["weight"] = 1e6;
  target["spec"]["services"][0]["ttft_ms"] = 500;  // kept: token terms
  // A service's field no reader knows is pruned too (issue 92: it was
  // kept, then dropped by the autoscaler's next merge patch).
  target["spec"]["services"][0]["throughput_rps"] = 90;
  auto made = client_->Create(kTargets, target);
  ASSERT_TRUE(made.ok());
  EXPECT_FALSE((*made)["spec"].contains("replicas"));
  EXPECT_FALSE((*made)["spec"]["gpus"][0]["instances"][0].contains("weight"));
  EXPECT_EQ((*made)["spec"]["services"][0]["ttft_ms"], 500);
  EXPECT_FALSE((*made)["spec"]["services"][0].contains("throughput_rps"));

  httplib::Client http(server_.url());
  target["metadata"]["name"] = "strict";
  auto res = http.Post(std::string(kTargets) + "?fieldValidation=Strict",
                       target.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("unknown field \\\"spec.gpus[0].instances[0]."
                           "weight\\\", unknown field \\\"spec.replicas\\\""),
            std::string::npos)
      << res->body;
}

TEST_F(StandInCustomResourcesTest, AResourceNoDefinitionServesIsNotFound) {
  auto refused = client_->Create(
      "/apis/migserve.io/v1alpha1/namespaces/replicas/targets", Target(0));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("404"), std::string::npos)
      << refused.status().message();
  refused = client_->Create(
      "/apis/migserve.io/v1/namespaces/replicas/servingtargets", Target(0));
  EXPECT_FALSE(refused.ok());
}

// A body the stand-in cannot read (protobuf, as kubectl's typed commands
// send) is refused as such, 415, not as a bad request.
TEST_F(StandInCustomResourcesTest, AProtobufBodyIsRefusedAsUnsupported) {
  httplib::Client http(server_.url());
  auto res = http.Post("/api/v1/namespaces/replicas/configmaps",
                       std::string("k8s\0\x0a", 5),
                       "application/vnd.kubernetes.protobuf");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 415);
  EXPECT_NE(res->body.find("reads JSON bodies only"), std::string::npos)
      << res->body;
}

// A built-in kind's body with a field its type lacks is refused under
// fieldValidation=Strict (kubectl's default), naming the field, and
// taken without it otherwise.
TEST_F(StandInCustomResourcesTest,
       StrictValidationNamesABuiltInKindsUnknownField) {
  httplib::Client http(server_.url());
  const std::string body =
      R"({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},)"
      R"( "dta": {"a": "b"}})";
  auto res =
      http.Post("/api/v1/namespaces/replicas/configmaps?fieldValidation=Strict",
                body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("strict decoding error: unknown field \\\"dta\\\""),
            std::string::npos)
      << res->body;
  res = http.Post("/api/v1/namespaces/replicas/configmaps", body,
                  "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
  std::optional<Json> stored =
      server_.Get("/api/v1/namespaces/replicas/configmaps/c");
  ASSERT_TRUE(stored.has_value());
  EXPECT_FALSE(stored->contains("dta"));
}

// What the API server's controllers delete with an object: a definition's
// custom resources, a namespace's objects; the rest stays.
TEST_F(StandInCustomResourcesTest, ADeletionTakesWhatDependsOnIt) {
  ASSERT_TRUE(client_->Create(kTargets, Target(0)).ok());
  server_.Put("/api/v1/namespaces/replicas/configmaps/a", Json::object());
  server_.Put("/api/v1/namespaces/other/configmaps/b", Json::object());
  ASSERT_TRUE(
      client_
          ->Delete("/apis/apiextensions.k8s.io/v1/"
                   "customresourcedefinitions/servingtargets.migserve.io")
          .ok());
  EXPECT_FALSE(server_.Get(std::string(kTargets) + "/day"));
  EXPECT_TRUE(server_.Get("/api/v1/namespaces/replicas/configmaps/a"));
  server_.Put("/api/v1/namespaces/replicas", Json::object());
  ASSERT_TRUE(client_->Delete("/api/v1/namespaces/replicas").ok());
  EXPECT_FALSE(server_.Get("/api/v1/namespaces/replicas/configmaps/a"));
  EXPECT_TRUE(server_.Get("/api/v1/namespaces/other/configmaps/b"));
}

TEST_F(StandInCustomResourcesTest, DiscoveryAndPrinterColumns) {
  auto groups = client_->Get("/apis");
  ASSERT_TRUE(groups.ok());
  // The custom resources' group beside the built-in ones (apps, rbac, ...).
  std::vector<std::string> served;
  for (const auto& g : (*groups)["groups"]) served.push_back(g["name"]);
  EXPECT_NE(std::find(served.begin(), served.end(), "migserve.io"),
            served.end());
  EXPECT_NE(std::find(served.begin(), served.end(), "apps"), served.end());
  auto resources = client_->Get("/apis/migserve.io/v1alpha1");
  ASSERT_TRUE(resources.ok());
  EXPECT_EQ((*resources)["resources"][0]["name"], "servingtargets");
  EXPECT_EQ((*resources)["resources"][0]["shortNames"][0], "mst");
  EXPECT_EQ((*resources)["resources"][1]["name"], "servingtargets/status");

  ASSERT_TRUE(client_->Create(kTargets, Target(0)).ok());
  ASSERT_TRUE(
      client_
          ->Patch(std::string(kTargets) + "/day/status",
                  {{"status",
                    {{"stage", "idle"},
                     {"gpusHeld", 1},
                     {"actionsDone", 4},
                     {"conditions",
                      {{{"type", "Progressing"},
                        {"status", "False"},
                        {"reason", "AtTarget"},
                        {"message", "m"},
                        {"lastTransitionTime", "2026-12-03T00:00:00Z"}},
                       {{"type", "Ready"},
                        {"status", "True"},
                        {"reason", "AtTarget"},
                        {"message", "m"},
                        {"lastTransitionTime", "2026-12-03T00:00:00Z"}}}}}}})
          .ok());
  httplib::Client http(server_.url());
  auto res =
      http.Get(kTargets, {{"Accept",
                           "application/json;as=Table;v=v1;g=meta.k8s.io,"
                           "application/json"}});
  ASSERT_TRUE(res);
  Json table = Json::parse(res->body);
  EXPECT_EQ(table["kind"], "Table");
  std::vector<std::string> names;
  for (const Json& c : table["columnDefinitions"]) names.push_back(c["name"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"Name", "Ready", "Progressing", "Stage",
                                      "GPUs", "Actions", "Age"}));
  Json cells = table["rows"][0]["cells"];
  EXPECT_EQ(cells[0], "day");
  EXPECT_EQ(cells[1], "True");
  EXPECT_EQ(cells[2], "False");
  EXPECT_EQ(cells[3], "idle");
  EXPECT_EQ(cells[4], 1);
  EXPECT_EQ(cells[5], 4);
}

TEST(JsonPathTest, PicksFieldsIndexesAndFilters) {
  Json o = {{"a", {{"b", {{{"t", "x"}, {"v", 1}}, {{"t", "y"}, {"v", 2}}}}}}};
  EXPECT_EQ(JsonPathValues(o, ".a.b[1].v"), std::vector<Json>{2});
  EXPECT_EQ(JsonPathValues(o, ".a.b[?(@.t==\"x\")].v"), std::vector<Json>{1});
  EXPECT_TRUE(JsonPathValues(o, ".a.b[?(@.t==\"z\")].v").empty());
  EXPECT_TRUE(JsonPathValues(o, ".a.c").empty());
  EXPECT_TRUE(JsonPathValues(o, ".a.b[7]").empty());
}

}  // namespace
}  // namespace migserve::kube
