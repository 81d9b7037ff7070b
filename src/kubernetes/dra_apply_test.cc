// dra-apply.sh's order through a stand-in of NVIDIA's DRA driver and the
// scheduler's first-fit allocation (testing/dra_scheduler.h): the objects
// `export --flavor dra` writes for a plan whose GPUs need holding claims,
// with the UUIDs read from the published ResourceSlices, created step by
// step as the script creates them (kubectl, the Deployment controller
// making each Deployment's pod), give every claim its planned device; the
// same claims created without the order and the holds do not.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "deployment/deployment_json.h"
#include "kube/kube_client.h"
#include "kube/testing/api_server_standin.h"
#include "kube/yaml_json.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/export.h"
#include "kubernetes/names.h"
#include "kubernetes/testing/dra_scheduler.h"
#include "util/test_util.h"

namespace migserve::kubernetes {
namespace {

using Json = nlohmann::json;

constexpr char kReplicaClaims[] =
    "/apis/resource.k8s.io/v1/namespaces/migserve-replicas/resourceclaims";
constexpr char kReplicaPods[] = "/api/v1/namespaces/migserve-replicas/pods";

class DraApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = deployment::LoadDeployment(
        testing::SourcePath("src/kubernetes/testdata/night-holes.json"));
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    auto state = ClusterFromDeployment(*d, {8, 0});
    ASSERT_TRUE(state.ok());
    state_ = *state;
    for (const GpuState& g : state_.gpus) {
      auto& [model, count] = gpus_[g.id.node];
      model = g.model;
      ++count;
    }
    ASSERT_TRUE(server_.Start().ok());
    kube::KubeConfig config;
    config.server = server_.url();
    client_ = std::make_unique<kube::KubeClient>(config);
    scheduler_ = std::make_unique<DraScheduler>(&server_, gpus_);
  }

  // What export writes, the claims pinned to the GPUs' UUIDs from the
  // slices, its objects by claim step.
  ExportedFiles Exported() {
    auto uuids = GpuUuidsOfSlices(scheduler_->Slices().dump(), "slices");
    EXPECT_TRUE(uuids.ok()) << uuids.status().ToString();
    ExportOptions options;
    options.partitioner = Partitioner::kDra;
    options.gpu_uuids = *uuids;
    options.serving.namespace_ = kReplicaNamespace;
    auto files = Export(state_, options);
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    for (const YAML::Node& doc : YAML::LoadAll(files->replicas)) {
      Json object = kube::YamlToJson(doc);
      Json labels = object["metadata"].value("labels", Json::object());
      if (labels.contains(kLabelClaimStep)) {
        by_step_[std::stoi(labels[kLabelClaimStep].get<std::string>())]
            .push_back(object);
      }
    }
    return *files;
  }

  // Creates `object` as kubectl does; a Deployment as the pod its
  // controller makes.
  void Create(const Json& object) {
    std::string kind = object["kind"];
    if (kind == "ResourceClaim") {
      ASSERT_TRUE(client_->Create(kReplicaClaims, object).ok());
    } else if (kind == "Pod") {
      ASSERT_TRUE(client_->Create(kReplicaPods, object).ok());
    } else if (kind == "Deployment") {
      Json pod = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata", object["spec"]["template"]["metadata"]},
                  {"spec", object["spec"]["template"]["spec"]}};
      pod["metadata"]["name"] = object["metadata"]["name"];
      ASSERT_TRUE(client_->Create(kReplicaPods, pod).ok());
    }
  }

  // The device claim `name` was given, or "".
  std::string DeviceOf(const std::string& name) {
    auto claim = server_.Get(std::string(kReplicaClaims) + "/" + name);
    if (!claim || !claim->contains("status")) return "";
    return (*claim)["status"]["allocation"]["devices"]["results"][0].value(
        "device", "");
  }

  ClusterState state_;
  std::map<std::string, std::pair<const mig::GpuModel*, int>> gpus_;
  kube::ApiServerStandIn server_{{"", "", "", 1}};
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<DraScheduler> scheduler_;
  std::map<int, std::vector<Json>> by_step_;
};

TEST_F(DraApplyTest, TheScriptsOrderLandsEveryClaimOnItsPlannedDevice) {
  ExportedFiles files = Exported();
  std::istringstream script(files.dra_apply);
  int steps = 0, releases = 0, replicas = 0;
  for (std::string line; std::getline(script, line);) {
    std::istringstream words(line);
    std::string verb, label, claim, device;
    words >> verb;
    if (verb == "step") {
      words >> label >> claim >> device;
      for (const Json& object : by_step_[std::stoi(label)]) Create(object);
      EXPECT_EQ(DeviceOf(claim), device) << line;
      ++steps;
    } else if (verb == "release") {
      words >> claim;
      ASSERT_TRUE(
          client_->Delete(std::string(kReplicaPods) + "/" + claim).ok());
      ASSERT_TRUE(
          client_->Delete(std::string(kReplicaClaims) + "/" + claim).ok());
      ++releases;
    }
  }
  for (const GpuState& g : state_.gpus) replicas += g.slots.size();
  EXPECT_EQ(steps, replicas + releases);
  EXPECT_GT(releases, 0);  // the plan needs holds
  EXPECT_EQ(scheduler_->Unschedulable(), std::vector<std::string>{});
  EXPECT_EQ(server_.List(kReplicaClaims).size(), static_cast<size_t>(replicas));
}

TEST_F(DraApplyTest, TheSameClaimsInAnotherOrderLandElsewhere) {
  Exported();
  int replicas = 0, elsewhere = 0;
  // Last step first, the holds left out: each GPU's highest start first.
  for (auto step = by_step_.rbegin(); step != by_step_.rend(); ++step) {
    const Json& first = step->second.front();
    if (first["metadata"]["name"].get<std::string>().rfind("hold-", 0) == 0) {
      continue;
    }
    for (const Json& object : step->second) Create(object);
    for (const Json& object : step->second) {
      if (object["kind"] != "ResourceClaim") continue;
      ++replicas;
      std::string planned =
          object["metadata"]["annotations"][kAnnotationDevice];
      elsewhere += DeviceOf(object["metadata"]["name"]) != planned;
    }
  }
  EXPECT_GT(replicas, 10);
  EXPECT_GT(elsewhere, 0);
}

}  // namespace
}  // namespace migserve::kubernetes
