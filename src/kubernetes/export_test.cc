#include "kubernetes/export.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "boundary/input_file.h"
#include "deployment/deployment_json.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/dra_classes.h"
#include "kubernetes/names.h"
#include "kubernetes/routing/proxy_routes.h"
#include "kubernetes/serving_spec.h"
#include "llm/llm_model.h"
#include "llm/slice_model.h"
#include "mig/gpu_catalog.h"
#include "mig/testing/gpus.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::kubernetes {
namespace {

using testing::A100;
using testing::SourcePath;

struct Loaded {
  deployment::Deployment deployment;
  ClusterState state;
};

Loaded Load(const std::string& name) {
  Loaded d;
  d.deployment =
      deployment::LoadDeployment(SourcePath("data/deployments/" + name))
          .value();
  d.state = ClusterFromDeployment(d.deployment, {8, 0}).value();
  return d;
}

Loaded LoadDay() { return Load("day.json"); }

// Compares `text` with the golden file; MIGSERVE_UPDATE_GOLDEN=1 rewrites it.
void ExpectGolden(const std::string& text, const std::string& name) {
  std::string path = SourcePath("src/kubernetes/testdata/" + name);
  if (std::getenv("MIGSERVE_UPDATE_GOLDEN") != nullptr) {
    ASSERT_TRUE(WriteFileAtomic(path, text).ok());
  }
  auto golden = ReadFile(path);
  ASSERT_TRUE(golden.ok()) << golden.status().ToString();
  EXPECT_EQ(text, *golden) << "differs from " << path
                           << " (MIGSERVE_UPDATE_GOLDEN=1 to rewrite)";
}

ServingSpec TritonSpec() {
  return LoadServingSpec(SourcePath("examples/triton/serving.yaml")).value();
}

// The GPUs' UUIDs of the night deployment's node, from the driver's
// ResourceSlices (another driver's slice among them).
std::map<std::pair<std::string, int>, std::string> NightUuids() {
  std::string source =
      SourcePath("src/kubernetes/testdata/night-dra/resource-slices.json");
  return GpuUuidsOfSlices(ReadFile(source).value(), source).value();
}

// Night with GPU 0's instances at 4 and 5 left empty: under DRA first-fit
// would put a planned instance below its start, so export holds the hole.
Loaded NightWithHoles() {
  Loaded night = Load("night.json");
  for (Slot& s : night.state.gpus[0].slots) {
    if (s.instance.start == 4 || s.instance.start == 5) s.replica.reset();
  }
  return night;
}

TEST(ExportTest, DayAndNightMatchTheGoldenFiles) {
  // Day with the Triton example's serving spec and routes; night with the
  // built-in template and no routes.
  Loaded day = LoadDay();
  ExportOptions options;
  options.serving = TritonSpec();
  options.proxy = ProxyExport{};
  auto plugin = Export(day.state, options);
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  ExpectGolden(plugin->mig_parted, "day/mig-parted.yaml");
  ExpectGolden(plugin->replicas, "day/replicas.yaml");
  ExpectGolden(plugin->routing, "day/routing.yaml");
  ExpectGolden(plugin->proxy, "day/proxy.yaml");
  Loaded night = Load("night.json");
  options = {};
  options.partitioner = Partitioner::kDra;
  options.gpu_uuids = NightUuids();
  auto dra = Export(night.state, options);
  ASSERT_TRUE(dra.ok());
  EXPECT_EQ(dra->proxy, "");
  ExpectGolden(dra->mig_parted, "night-dra/mig-parted.yaml");
  ExpectGolden(dra->replicas, "night-dra/replicas.yaml");
  ExpectGolden(dra->dra_apply, "night-dra/dra-apply.sh");
  ExpectGolden(dra->device_classes, "night-dra/device-classes.yaml");
  EXPECT_EQ(dra->routing, "");
  EXPECT_EQ(plugin->device_classes, "");
}

// A class per profile placed, each naming the device plugin's resource,
// which spells a profile's '+' as '.' (nvidia.com/mig-1g.10gb.me).
TEST(ExportTest, DeviceClassesNameTheDevicePluginsResources) {
  const mig::GpuModel& a100 = A100();
  using migserve::testing::A100Instance;
  ClusterState state;
  state.gpus.push_back({{"n", 0},
                        &a100,
                        {{A100Instance("1g.10gb", 0), {}},
                         {A100Instance("1g.10gb+me", 1), {}},
                         {A100Instance("1g.10gb", 2), {}}}});
  std::vector<YAML::Node> classes = YAML::LoadAll(DeviceClasses(state));
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0]["metadata"]["name"].as<std::string>(),
            "migserve-mig-1g-10gb");
  EXPECT_EQ(classes[0]["spec"]["extendedResourceName"].as<std::string>(),
            "nvidia.com/mig-1g.10gb");
  EXPECT_EQ(
      classes[0]["spec"]["selectors"][0]["cel"]["expression"].as<std::string>(),
      "device.driver == 'gpu.nvidia.com' && "
      "device.attributes['gpu.nvidia.com'].type == 'mig' && "
      "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'");
  EXPECT_EQ(classes[1]["metadata"]["name"].as<std::string>(),
            "migserve-mig-1g-10gb-me");
  EXPECT_EQ(classes[1]["spec"]["extendedResourceName"].as<std::string>(),
            "nvidia.com/mig-1g.10gb.me");
  EXPECT_EQ(DeviceClasses(state).find("# No extended resource"),
            std::string::npos);
}

// Slices are checked against the deployment they pin (issue 76: slices with
// duplicate UUIDs or of another product were taken, exit 0): each GPU it
// serves on is listed, as the product it places there, by a UUID no other
// GPU has.
TEST(ExportTest, ResourceSlicesMustListTheDeploymentsGpusAsTheyAre) {
  Loaded night = Load("night.json");
  std::string source =
      SourcePath("src/kubernetes/testdata/night-dra/resource-slices.json");
  nlohmann::json slices = nlohmann::json::parse(ReadFile(source).value());
  ASSERT_TRUE(GpuUuidsOfSlices(slices.dump(), "s.json", &night.state).ok());
  // The device of GPU `minor` of node-0 in `list`, and its slice's name.
  std::string slice_of_1;
  auto gpu = [&](nlohmann::json* list, int minor) -> nlohmann::json& {
    for (nlohmann::json& item : (*list)["items"]) {
      if (item["spec"].value("nodeName", "") != "node-0") continue;
      for (nlohmann::json& d : item["spec"]["devices"]) {
        if (d["name"] == "gpu-" + std::to_string(minor)) {
          if (minor == 1) slice_of_1 = item["metadata"]["name"];
          return d;
        }
      }
    }
    ADD_FAILURE() << "no gpu-" << minor;
    return (*list)["items"][0];
  };
  nlohmann::json twice = slices;
  gpu(&twice, 1)["attributes"]["uuid"] = gpu(&twice, 0)["attributes"]["uuid"];
  EXPECT_EQ(
      GpuUuidsOfSlices(twice.dump(), "s.json").status().message(),
      fmt::format("s.json: ResourceSlice {}: device gpu-1 of node node-0: "
                  "uuid GPU-4b1e0c7d-2f3a-4c5b-8d6e-000000000000 is GPU 0 of "
                  "node node-0 already",
                  slice_of_1));
  nlohmann::json other = slices;
  gpu(&other,
      0)["attributes"]["productName"] = {{"string", "NVIDIA H100 80GB HBM3"}};
  EXPECT_EQ(
      GpuUuidsOfSlices(other.dump(), "s.json", &night.state).status().message(),
      "s.json: GPU 0 of node node-0 is a NVIDIA H100 80GB HBM3, the "
      "deployment places A100-SXM4-80GB there");
  // A slice that does not offer an instance night places: GPU 3's
  // 3g.40gb at start 4 (DynamicMIG off, or another driver's offer).
  nlohmann::json unoffered = slices;
  for (nlohmann::json& item : unoffered["items"]) {
    nlohmann::json& devices = item["spec"]["devices"];
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i]["name"] == "gpu-3-mig-3g40gb-9-4") {
        devices.erase(i);
        break;
      }
    }
  }
  EXPECT_EQ(GpuUuidsOfSlices(unoffered.dump(), "s.json", &night.state)
                .status()
                .message(),
            "s.json: GPU 3 of node node-0: ResourceSlice "
            "node-0-gpu.nvidia.com-3 offers no device gpu-3-mig-3g40gb-9-4 for "
            "the deployment's 3g.40gb at start 4 (24 MIG devices offered), so "
            "its claim could not be allocated; with DynamicMIG on, NVIDIA's "
            "DRA driver offers every profile at every start "
            "(docs/kubernetes.md, \"Claims that land on the plan\")");
  nlohmann::json missing = slices;
  gpu(&missing, 0)["name"] = "not-a-gpu";
  EXPECT_EQ(GpuUuidsOfSlices(missing.dump(), "s.json", &night.state)
                .status()
                .message(),
            "s.json: no ResourceSlice of gpu.nvidia.com lists GPU 0 of node "
            "node-0, which the deployment serves on");
}

TEST(ExportTest, ResourceSlicesGiveEachGpusUuid) {
  auto uuids = NightUuids();
  ASSERT_EQ(uuids.size(), 6u);
  EXPECT_EQ((uuids[{"node-0", 5}]), "GPU-4b1e0c7d-2f3a-4c5b-8d6e-000000000005");
  EXPECT_EQ(GpuUuidsOfSlices("[]", "s.json").status().message(),
            "s.json: not a ResourceSliceList (kubectl get resourceslices -o "
            "json)");
  std::string hostile =
      R"({"items": [{"metadata": {"name": "x"}, "spec": {"driver": )"
      R"("gpu.nvidia.com", "nodeName": "n", "devices": [{"name": "gpu-0", )"
      R"("attributes": {"uuid": {"string": "GPU-1' || true || '"}}}]}}]})";
  EXPECT_EQ(GpuUuidsOfSlices(hostile, "s.json").status().message(),
            "s.json: ResourceSlice x: device gpu-0: no node, or no plain "
            "attributes.uuid.string");
  // Fields of other types are absent, never a crash.
  for (const char* odd :
       {R"({"items": [1, "x", null, {"spec": 2}]})",
        R"({"items": [{"spec": {"driver": 1, "devices": 2}}]})",
        R"({"items": [{"spec": {"driver": "gpu.nvidia.com", "devices": )"
        R"([3, {"name": 4}, {"name": "gpu-1", "attributes": 5}]}}]})"}) {
    auto read = GpuUuidsOfSlices(odd, "s.json");
    EXPECT_TRUE(read.ok() ||
                read.status().code() == Status::Code::kInvalidArgument)
        << odd;
  }
  EXPECT_FALSE(GpuUuidsOfSlices(R"({"items": 1})", "s.json").ok());
}

// Where first-fit would put a planned instance below its start, a holding
// claim and its pause pod take the lower slices first, and dra-apply.sh
// releases them once the GPU's claims are allocated.
TEST(ExportTest, DraClaimsHoldTheHolesFirstFitWouldTake) {
  Loaded night = NightWithHoles();
  ExportOptions options;
  options.partitioner = Partitioner::kDra;
  options.gpu_uuids = NightUuids();
  std::string script;
  auto text = ReplicaObjects(night.state, options, &script);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  std::string hold = "hold-node-0-0-4";
  size_t step = script.find("step 4 " + hold + " gpu-0-mig-1g20gb-15-4\n");
  size_t six =
      script.find("step 5 bert-1-node-0-g0-1g-10gb-6 gpu-0-mig-1g10gb-19-6\n");
  size_t release = script.find("release " + hold + "\n");
  ASSERT_NE(step, std::string::npos) << script;
  ASSERT_NE(six, std::string::npos) << script;
  EXPECT_LT(step, six);
  EXPECT_LT(six, release);
  EXPECT_EQ(script.find("release", release + 1), std::string::npos);
  std::vector<YAML::Node> docs = YAML::LoadAll(*text);
  int holds = 0;
  for (const YAML::Node& d : docs) {
    if (d["metadata"]["name"].as<std::string>() != hold) continue;
    ++holds;
    EXPECT_EQ(d["metadata"]["labels"][kLabelClaimStep].as<std::string>(), "4");
    if (d["kind"].as<std::string>() == "Pod") {
      EXPECT_EQ(d["spec"]["containers"][0]["image"].as<std::string>(),
                kPauseImage);
    } else {
      EXPECT_EQ(d["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]
                 ["cel"]["expression"]
                     .as<std::string>(),
                "device.attributes['gpu.nvidia.com'].profile == '1g.20gb' && "
                "device.attributes['gpu.nvidia.com'].parentUUID == "
                "'GPU-4b1e0c7d-2f3a-4c5b-8d6e-000000000000'");
    }
  }
  EXPECT_EQ(holds, 2);  // the claim and its pod
  options.gpu_uuids.erase({"node-0", 3});
  EXPECT_EQ(ReplicaObjects(night.state, options).status().message(),
            "the resource slices list no GPU node-0/3 (no device gpu-3 of "
            "driver gpu.nvidia.com on node node-0)");
}

// The label keys by which deploy/base/admission.yaml's policy
// migserve-replica-pods knows a replica pod (its variable `keys`).
std::set<std::string> AdmissionReplicaKeys() {
  std::string path = SourcePath("deploy/base/admission.yaml");
  std::set<std::string> keys;
  for (const YAML::Node& d : YAML::LoadAll(ReadFile(path).value())) {
    if (d["metadata"]["name"].as<std::string>() != "migserve-replica-pods" ||
        d["kind"].as<std::string>() != "ValidatingAdmissionPolicy") {
      continue;
    }
    for (const YAML::Node& v : d["spec"]["variables"]) {
      if (v["name"].as<std::string>() != "keys") continue;
      std::string list = v["expression"].as<std::string>();
      std::regex quoted("\"([^\"]*)\"");
      for (auto m = std::sregex_iterator(list.begin(), list.end(), quoted);
           m != std::sregex_iterator(); ++m) {
        keys.insert((*m)[1]);
      }
    }
  }
  return keys;
}

// The install's admission policy keeps replica pods to their makers by
// their labels: it names every label a router or a gateway's Service takes
// a replica by, every replica pod export writes carries one, and the DRA
// holds (which the user applies) none.
TEST(ExportTest, TheAdmissionPolicyNamesEveryReplicaLabel) {
  std::set<std::string> keys = AdmissionReplicaKeys();
  for (const char* key : {kLabelService, kLabelGroup, kLabelGpu, kLabelStart}) {
    EXPECT_TRUE(keys.contains(key)) << key;
  }
  auto carries_one = [&](const YAML::Node& labels) {
    for (const auto& label : labels) {
      if (keys.contains(label.first.as<std::string>())) return true;
    }
    return false;
  };
  Loaded night = NightWithHoles();
  for (Partitioner partitioner : {Partitioner::kAgent, Partitioner::kDra}) {
    ExportOptions options;
    options.partitioner = partitioner;
    options.gpu_uuids = NightUuids();
    auto text = ReplicaObjects(night.state, options);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    int replicas = 0, holds = 0;
    for (const YAML::Node& d : YAML::LoadAll(*text)) {
      std::string kind = d["kind"].as<std::string>();
      if (kind == "Deployment") {
        ++replicas;
        EXPECT_TRUE(carries_one(d["spec"]["template"]["metadata"]["labels"]))
            << d["metadata"]["name"];
      } else if (kind == "Pod") {
        ++holds;
        EXPECT_FALSE(carries_one(d["metadata"]["labels"]))
            << d["metadata"]["name"];
      }
    }
    // A Deployment per service, or under DRA per replica (and one hold).
    EXPECT_EQ(replicas, partitioner == Partitioner::kDra ? 34 : 8);
    EXPECT_EQ(holds, partitioner == Partitioner::kDra ? 1 : 0);
  }
}

// The routes of proxy.yaml's routes ConfigMap `doc`, as the router reads
// them.
StatusOr<ProxyRoutes> RoutesOf(const YAML::Node& doc) {
  nlohmann::json map = {{"data", nlohmann::json::object()}};
  for (const auto& entry : doc["data"]) {
    map["data"][entry.first.as<std::string>()] = entry.second.as<std::string>();
  }
  return ParseProxyRoutes(map);
}

// proxy.yaml's ConfigMap holds every service's route with every replica,
// and its Deployment runs as many proxies as the credits count.
TEST(ExportTest, TheProxysRoutesNameEveryReplica) {
  Loaded day = LoadDay();
  ExportOptions options;
  options.proxy = ProxyExport{3, "migserve:test"};
  auto files = Export(day.state, options);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  int kinds = 0;
  for (const YAML::Node& doc : YAML::LoadAll(files->proxy)) {
    std::string kind = doc["kind"].as<std::string>();
    ++kinds;
    if (kind == "Deployment") {
      EXPECT_EQ(doc["spec"]["replicas"].as<int>(), 3);
      EXPECT_EQ(doc["spec"]["template"]["spec"]["containers"][0]["image"]
                    .as<std::string>(),
                "migserve:test");
    }
    if (kind != "ConfigMap") continue;
    auto routes = RoutesOf(doc);
    ASSERT_TRUE(routes.ok()) << routes.status().ToString();
    EXPECT_EQ(routes->generation, 1);
    std::map<std::string, ServiceRoute> want = Routes(day.state);
    ASSERT_EQ(routes->services.size(), want.size());
    for (const auto& [service, route] : want) {
      EXPECT_EQ(routes->services.at(service).route, route) << service;
    }
    // Each member names the Deployment that runs it (its node, and its
    // GPU and start among the Deployment's placements), so that the proxy
    // takes that Deployment's pods and no copy of their labels.
    std::map<std::string, YAML::Node> deployments;
    for (const YAML::Node& d : YAML::LoadAll(files->replicas)) {
      if (d["kind"].as<std::string>() == "Deployment") {
        deployments[d["metadata"]["name"].as<std::string>()] = d;
      }
    }
    int named = 0;
    for (const auto& [service, route] : routes->services) {
      for (const RouteGroup& g : route.route.groups) {
        for (const ReplicaSite& m : g.members) {
          ASSERT_TRUE(route.owners.count(m)) << service;
          const YAML::Node& d = deployments.at(route.owners.at(m));
          const YAML::Node& meta = d["metadata"];
          EXPECT_EQ(meta["labels"][kLabelService].as<std::string>(), service);
          EXPECT_EQ(meta["labels"][kLabelNode].as<std::string>(), m.gpu.node);
          std::string placements =
              "," +
              meta["annotations"][kAnnotationPlacements].as<std::string>() +
              ",";
          EXPECT_NE(
              placements.find(fmt::format(",{}:{},", m.gpu.index, m.start)),
              std::string::npos);
          ++named;
        }
      }
    }
    EXPECT_EQ(named, 103);
  }
  EXPECT_EQ(kinds, 7);  // ServiceAccount, Role, RoleBinding, ConfigMap,
                        // Deployment, PodDisruptionBudget, Service
}

// Under DRA each replica is a one-replica Deployment with its site's
// labels: the member's owner is that Deployment.
TEST(ExportTest, DraRoutesNameEachReplicasOwnDeployment) {
  Loaded night = Load("night.json");
  ExportOptions options;
  options.partitioner = Partitioner::kDra;
  options.gpu_uuids = NightUuids();
  options.proxy = ProxyExport{};
  auto files = Export(night.state, options);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  std::map<ReplicaSite, std::pair<std::string, std::string>> at;
  for (const YAML::Node& d : YAML::LoadAll(files->replicas)) {
    if (d["kind"].as<std::string>() != "Deployment") continue;
    const YAML::Node& labels = d["metadata"]["labels"];
    at[{{labels[kLabelNode].as<std::string>(),
         std::stoi(labels[kLabelGpu].as<std::string>())},
        std::stoi(labels[kLabelStart].as<std::string>())}] = {
        labels[kLabelService].as<std::string>(),
        d["metadata"]["name"].as<std::string>()};
  }
  int named = 0;
  for (const YAML::Node& doc : YAML::LoadAll(files->proxy)) {
    if (doc["kind"].as<std::string>() != "ConfigMap") continue;
    auto routes = RoutesOf(doc);
    ASSERT_TRUE(routes.ok()) << routes.status().ToString();
    for (const auto& [service, route] : routes->services) {
      for (const RouteGroup& g : route.route.groups) {
        for (const ReplicaSite& m : g.members) {
          ASSERT_TRUE(at.count(m)) << service;
          EXPECT_EQ(at.at(m).first, service);
          EXPECT_EQ(route.owners.at(m), at.at(m).second);
          ++named;
        }
      }
    }
  }
  EXPECT_EQ(named, static_cast<int>(at.size()));
  EXPECT_GT(named, 0);
}

// What an application applies holds only namespaced objects (issue 90: the
// proxy's cluster-scoped admission policy kept a namespace admin from
// applying their own export); the policy that holds every proxy to its own
// pod is the install's (deploy/base/admission.yaml).
TEST(ExportTest, AnApplicationsFilesApplyWithANamespacesRights) {
  Loaded day = LoadDay();
  ExportOptions options;
  options.proxy = ProxyExport{};
  options.serving.namespace_ = "ns";
  auto files = Export(day.state, options);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  const std::set<std::string> namespaced = {
      "ConfigMap",    "Deployment",
      "Pod",          "PodDisruptionBudget",
      "Role",         "RoleBinding",
      "Service",      "ServiceAccount",
      "HTTPRoute",    "ResourceClaimTemplate",
      "ResourceClaim"};
  int objects = 0;
  for (const std::string* file :
       {&files->replicas, &files->routing, &files->proxy}) {
    for (const YAML::Node& doc : YAML::LoadAll(*file)) {
      if (!doc.IsMap()) continue;
      ++objects;
      std::string kind = doc["kind"].as<std::string>();
      EXPECT_TRUE(namespaced.count(kind)) << kind;
      EXPECT_EQ(doc["metadata"]["namespace"].as<std::string>(""), "ns") << kind;
    }
  }
  EXPECT_GT(objects, 10);
}

TEST(ExportTest, PodsRunTheSpecsTemplateWithTheReplicaContract) {
  Loaded day = LoadDay();
  ExportOptions options;
  options.serving = TritonSpec();
  std::vector<YAML::Node> objects =
      YAML::LoadAll(ReplicaObjects(day.state, options).value());
  int bert = 0;
  for (const YAML::Node& d : objects) {
    YAML::Node pod = d["spec"]["template"];
    YAML::Node c = pod["spec"]["containers"][0];
    EXPECT_EQ(c["image"].as<std::string>(),
              "nvcr.io/nvidia/tritonserver:24.08-py3");
    EXPECT_EQ(c["command"][1].as<std::string>(), "/scripts/start-replica.sh");
    EXPECT_EQ(c["resources"]["requests"]["memory"].as<std::string>(), "16Gi");
    EXPECT_EQ(c["resources"]["limits"].size(), 2u);  // memory, MIG device
    EXPECT_EQ(pod["spec"]["volumes"].size(), 3u);
    EXPECT_EQ(pod["spec"]["tolerations"].size(), 1u);
    EXPECT_EQ(pod["metadata"]["labels"]["app.kubernetes.io/part-of"]
                  .as<std::string>(),
              "inference");
    std::map<std::string, std::string> env;
    for (const YAML::Node& v : c["env"]) {
      env[v["name"].as<std::string>()] = v["value"].as<std::string>();
    }
    std::string service =
        d["metadata"]["labels"][kLabelService].as<std::string>();
    EXPECT_EQ(env["MIGSERVE_SERVICE"], service);
    EXPECT_EQ(env["MIGSERVE_BATCH"],
              d["metadata"]["annotations"][kAnnotationBatch].as<std::string>());
    EXPECT_EQ(env["MIGSERVE_GROUP"],
              pod["metadata"]["labels"][kLabelGroup].as<std::string>());
    EXPECT_EQ(env["MIGSERVE_PORT"], "8000");
    EXPECT_EQ(env.count("MIGSERVE_GPU"), 0u);  // the device plugin picks
    // The contract comes first, the template's variables after it.
    EXPECT_EQ(c["env"][0]["name"].as<std::string>(), "MIGSERVE_SERVICE");
    if (service == "bert-1") {
      ++bert;
      EXPECT_EQ(env["MAX_QUEUE_DELAY_US"], "5000");
    } else {
      EXPECT_EQ(env["MAX_QUEUE_DELAY_US"], "2000");
    }
  }
  EXPECT_GT(bert, 0);
}

// One GPU: a DNN service (vision, 4g.40gb) beside a language model's
// (chat, llama-3.1-8b on 3g.40gb).
ClusterState VisionAndChat() {
  auto d = deployment::ParseDeployment(
      R"({"gpu": "A100-SXM4-80GB",
  "services": [
    {"name": "vision", "model": "resnet50", "throughput": 100,
     "latency_ms": 100},
    {"name": "chat", "model": "llama-3.1-8b", "throughput": 2,
     "latency_ms": 60000, "kind": "llm", "ttft_ms": 2000, "tpot_ms": 100,
     "prompt_tokens": 512, "output_tokens": 128}],
  "gpus": [{"id": 0, "instances": [
    {"profile": "3g.40gb", "start": 4, "service": "chat", "batch": 256,
     "procs": 1, "throughput": 2, "latency_ms": 5000},
    {"profile": "4g.40gb", "start": 0, "service": "vision", "batch": 8,
     "procs": 1, "throughput": 100, "latency_ms": 20}]}]})",
      "llm.json");
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return ClusterFromDeployment(*d, {8, 0}).value();
}

// A language model's replicas run vLLM by default, with the engine
// settings of their slice (issue 75: they ran as Triton pods, and vLLM
// without --max-model-len refuses a slice whose KV room is below the
// model's context); the others keep Triton. The longest sequence is the
// service's p99 prompt plus p99 output (exponential prompts of mean 1,000:
// 1,000 ln 100). A spec whose template is its own serves every service
// with it, unless its `templates:` names the kind.
TEST(ExportTest, LanguageModelsRunVllmWithTheirSlicesEngineSettings) {
  ClusterState state = VisionAndChat();
  llm::LlmTerms terms;
  terms.ttft_ms = 2000;
  terms.tpot_ms = 100;
  terms.prompt_tokens = 1000;
  terms.prompt_cv = 1;
  terms.output_tokens = 200;
  auto containers = [&](const ServingSpec& spec) {
    std::map<std::string, YAML::Node> by_service;
    ExportOptions options;
    options.serving = spec;
    options.serving.kinds["chat"] = *workload::ParseServiceKind("llm");
    options.serving.tokens["chat"] = terms;
    options.serving.llm_models["chat"] = std::shared_ptr<const llm::LlmModel>(
        llm::SharedShippedLlmModels(),
        *llm::ShippedLlmModels().Find("llama-3.1-8b"));
    for (const YAML::Node& o :
         YAML::LoadAll(ReplicaObjects(state, options).value())) {
      by_service[o["metadata"]["labels"][kLabelService].as<std::string>()] =
          o["spec"]["template"]["spec"]["containers"][0];
    }
    return by_service;
  };
  auto env = [](const YAML::Node& c) {
    std::map<std::string, std::string> out;
    for (const YAML::Node& v : c["env"]) {
      out[v["name"].as<std::string>()] = v["value"].as<std::string>();
    }
    return out;
  };
  auto built_in = containers(ServingSpec{});
  EXPECT_EQ(built_in["vision"]["image"].as<std::string>(), kTritonImage);
  const YAML::Node& chat = built_in["chat"];
  EXPECT_EQ(chat["image"].as<std::string>(), kVllmImage);
  std::vector<std::string> args = chat["args"].as<std::vector<std::string>>();
  EXPECT_NE(std::find(args.begin(), args.end(),
                      "--max-model-len=$(MIGSERVE_MAX_MODEL_LEN)"),
            args.end());
  EXPECT_EQ(env(chat)["MIGSERVE_MAX_MODEL_LEN"],
            std::to_string(
                static_cast<long>(std::ceil(1000 * std::log(100.0) + 200))));
  EXPECT_EQ(env(chat)["MIGSERVE_KV_CACHE_DTYPE"], "auto");
  EXPECT_EQ(env(built_in["vision"]).count("MIGSERVE_MAX_MODEL_LEN"), 0u);
  // vLLM answers to every name the proxy routes to it (issue 89: it served
  // the service's name alone and answered 404 to the model's): the
  // service first, whose name vLLM's metrics carry.
  auto named = std::find(args.begin(), args.end(), "--served-model-name");
  ASSERT_NE(named, args.end());
  EXPECT_EQ(std::vector<std::string>(named + 1, named + 6),
            (std::vector<std::string>{
                "chat", "llama-3.1-8b", "meta-llama/Llama-3.1-8B",
                "meta-llama/Llama-3.1-8B-Instruct",
                "meta-llama/Meta-Llama-3.1-8B-Instruct"}));
  EXPECT_EQ(named[6], "--max-num-seqs=$(MIGSERVE_BATCH)");
  EXPECT_EQ(env(chat)["MIGSERVE_SERVED_MODEL_NAMES"],
            "chat llama-3.1-8b meta-llama/Llama-3.1-8B "
            "meta-llama/Llama-3.1-8B-Instruct "
            "meta-llama/Meta-Llama-3.1-8B-Instruct");
  EXPECT_EQ(env(built_in["vision"]).count("MIGSERVE_SERVED_MODEL_NAMES"), 0u);
  // One template of the spec's own for all, unless `templates:` names the
  // kind.
  auto triton = containers(TritonSpec());
  EXPECT_EQ(triton["chat"]["command"][1].as<std::string>(),
            "/scripts/start-replica.sh");
  ServingSpec both = TritonSpec();
  both.kind_pods[*workload::ParseServiceKind("llm")] =
      ServingSpec::VllmTemplate();
  both.kind_pods[*workload::ParseServiceKind("llm")]["image"] =
      "vllm/vllm-openai:v0.11.0";
  auto split = containers(both);
  EXPECT_EQ(split["chat"]["image"].as<std::string>(),
            "vllm/vllm-openai:v0.11.0");
  EXPECT_EQ(split["vision"]["command"][1].as<std::string>(),
            "/scripts/start-replica.sh");
}

// The proxy's routes mark a service whose kind runs on vLLM as an OpenAI
// one, through the routes ConfigMap the proxies read; the others stay
// KServe v2, whatever their model.
TEST(ExportTest, ProxyRoutesMarkLanguageModelsOpenAi) {
  ClusterState state = VisionAndChat();
  ServingSpec spec;
  spec.kinds["chat"] = *workload::ParseServiceKind("llm");
  EXPECT_FALSE(ProxyRoutesOf(state, ModelsOf(state), ServingSpec{})
                   .services.at("chat")
                   .openai);
  ProxyRoutes routes = ProxyRoutesOf(state, ModelsOf(state), spec);
  EXPECT_TRUE(routes.services.at("chat").openai);
  EXPECT_FALSE(routes.services.at("vision").openai);
  nlohmann::json map = ProxyRoutesConfigMap(routes, "ns");
  EXPECT_NE(
      map["data"]["route.chat"].get<std::string>().find("\"api\":\"openai\""),
      std::string::npos);
  EXPECT_EQ(map["data"]["route.vision"].get<std::string>().find("\"api\""),
            std::string::npos);
  auto read = ParseProxyRoutes(map);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, routes);
  map["data"]["route.chat"] =
      "{\"service\": \"chat\", \"model\": "
      "\"llama-3.1-8b\", \"api\": \"grpc\", "
      "\"groups\": []}";
  auto bad = ParseProxyRoutes(map);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "api: must be kserve (the default) or openai, got grpc"),
            std::string::npos)
      << bad.status().message();
}

// Through `router: gateway-api` a language model's HTTPRoute matches the
// OpenAI API under /v1, its service named by the body's model (the header
// the Inference Extension's body-based routing sets) or by the
// migserve-service header, whatever the spec's match (issue 75: it matched
// /v2/models/<model>, which no OpenAI request reaches); the others keep
// the spec's match, and two LLM services of one model are told apart.
TEST(ExportTest, ALanguageModelsHttpRouteMatchesTheOpenAiApi) {
  ClusterState state = VisionAndChat();
  for (GpuState& g : state.gpus) {
    for (Slot& s : g.slots) {
      if (s.replica && s.replica->service == "vision") {
        s.replica->model = "llama-3.1-8b";  // a model the chat shares
      }
    }
  }
  ServingSpec spec = TritonSpec();
  ASSERT_EQ(spec.match, RouteMatch::kPath);
  spec.kinds["chat"] = *workload::ParseServiceKind("llm");
  auto objects = RoutingObjects(state, spec);
  ASSERT_TRUE(objects.ok()) << objects.status().ToString();
  std::map<std::string, YAML::Node> routes;
  for (const YAML::Node& o : YAML::LoadAll(*objects)) {
    if (o["kind"].as<std::string>() == "HTTPRoute") {
      routes[o["metadata"]["name"].as<std::string>()] = o;
    }
  }
  ASSERT_EQ(routes.size(), 2u);
  const YAML::Node chat = routes["chat"]["spec"]["rules"][0]["matches"];
  ASSERT_EQ(chat.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(chat[i]["path"]["type"].as<std::string>(), "PathPrefix");
    EXPECT_EQ(chat[i]["path"]["value"].as<std::string>(), "/v1");
    EXPECT_EQ(chat[i]["headers"][0]["value"].as<std::string>(), "chat");
  }
  EXPECT_EQ(chat[0]["headers"][0]["name"].as<std::string>(),
            "X-Gateway-Model-Name");
  EXPECT_EQ(chat[1]["headers"][0]["name"].as<std::string>(),
            "migserve-service");
  const YAML::Node vision = routes["vision"]["spec"]["rules"][0]["matches"];
  ASSERT_EQ(vision.size(), 1u);
  EXPECT_EQ(vision[0]["path"]["value"].as<std::string>(),
            "/v2/models/llama-3.1-8b");
}

TEST(ExportTest, RoutesWeighGroupsByCapacity) {
  Loaded day = LoadDay();
  ExportOptions options;
  options.serving = TritonSpec();
  std::vector<YAML::Node> objects =
      YAML::LoadAll(RoutingObjects(day.state, options.serving).value());
  // Group Services by name, and what each selects.
  std::map<std::string, double> capacity;      // group -> replicas x throughput
  std::map<std::string, std::string> slot_of;  // group -> its slot's name
  for (const GpuState& g : day.state.gpus) {
    for (const Slot& s : g.slots) {
      if (!s.replica) continue;
      RouteGroup of = GroupOf(*s.replica, *g.model, s.instance);
      std::string group = GroupName(s.replica->service, of);
      capacity[group] += s.replica->credit;
      slot_of[group] = SlotName(s.replica->service, of);
    }
  }
  int services = 0, routes = 0;
  std::map<std::string, std::string> selects;  // Service -> its group
  for (const YAML::Node& o : objects) {
    std::string kind = o["kind"].as<std::string>();
    if (kind == "Service") {
      ++services;
      std::string name = o["metadata"]["name"].as<std::string>();
      std::string group = o["spec"]["selector"][kLabelGroup].as<std::string>();
      EXPECT_EQ(capacity.count(group), 1u) << name;
      // One credit per slot here: each Service has its slot's name, the
      // group's identity without the credit.
      EXPECT_EQ(name, slot_of.at(group));
      selects[name] = group;
      continue;
    }
    ASSERT_EQ(kind, "HTTPRoute");
    ++routes;
    EXPECT_EQ(o["apiVersion"].as<std::string>(),
              "gateway.networking.k8s.io/v1");
    EXPECT_EQ(o["spec"]["parentRefs"][0]["name"].as<std::string>(),
              "inference");
    YAML::Node rule = o["spec"]["rules"][0];
    std::string service =
        o["metadata"]["labels"][kLabelService].as<std::string>();
    std::string model;
    for (const workload::Service& s : day.deployment.services) {
      if (s.name == service) model = s.model;
    }
    EXPECT_EQ(rule["matches"][0]["path"]["value"].as<std::string>(),
              "/v2/models/" + model);
    double weights = 0, total = 0;
    for (const YAML::Node& b : rule["backendRefs"]) {
      weights += b["weight"].as<double>();
      total += capacity.at(selects.at(b["name"].as<std::string>()));
    }
    for (const YAML::Node& b : rule["backendRefs"]) {
      EXPECT_NEAR(b["weight"].as<double>() / weights,
                  capacity.at(selects.at(b["name"].as<std::string>())) / total,
                  1e-5)
          << service;
      EXPECT_EQ(b["port"].as<int>(), 8000);
    }
  }
  EXPECT_EQ(routes, 5);
  EXPECT_EQ(services, static_cast<int>(capacity.size()));
  // densenet169-1 and inceptionv3-1 have replicas of two sizes.
  EXPECT_GT(services, routes);
}

TEST(ExportTest, RoutingNeedsAGatewayAndDistinctModelPaths) {
  Loaded day = LoadDay();
  ServingSpec spec;
  EXPECT_NE(RoutingObjects(day.state, spec)
                .status()
                .message()
                .find("routing.gateway is not set"),
            std::string::npos);
  spec.gateway = GatewayRef{"gw", "", ""};
  for (GpuState& g : day.state.gpus) {
    for (Slot& s : g.slots) {
      if (s.replica) s.replica->model = "same";
    }
  }
  auto shared = RoutingObjects(day.state, spec);
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("set routing.match: header"),
            std::string::npos)
      << shared.status().message();
  spec.match = RouteMatch::kHeader;
  auto by_header = RoutingObjects(day.state, spec);
  ASSERT_TRUE(by_header.ok());
  EXPECT_NE(by_header->find("name: migserve-service"), std::string::npos);
}

TEST(ExportTest, MigPartedHasEveryInstanceOfEveryGpuPerNode) {
  Loaded day = LoadDay();
  YAML::Node spec = YAML::Load(MigPartedConfig(day.state));
  EXPECT_EQ(spec["version"].as<std::string>(), "v1");
  int entries = 0;
  for (const GpuState& g : day.state.gpus) {
    YAML::Node node = spec["mig-configs"][g.id.node];
    ASSERT_TRUE(node.IsSequence()) << g.id;
    bool found = false;
    for (const YAML::Node& entry : node) {
      if (entry["devices"][0].as<int>() != g.id.index) continue;
      found = true;
      ++entries;
      EXPECT_TRUE(entry["mig-enabled"].as<bool>());
      std::map<std::string, int> want;
      for (const Slot& s : g.slots)
        ++want[A100().profiles[s.instance.profile].name];
      using Counts = std::map<std::string, int>;
      EXPECT_EQ(entry["mig-devices"].as<Counts>(), want) << "GPU " << g.id;
    }
    EXPECT_TRUE(found) << "GPU " << g.id;
  }
  EXPECT_EQ(entries, static_cast<int>(day.state.gpus.size()));
}

// An idle GPU (an inventory GPU the deployment does not use) is left out:
// `mig-devices: {}` would clear whatever runs on it. A node with only idle
// GPUs gets no config.
TEST(ExportTest, MigPartedLeavesIdleGpusAlone) {
  Loaded day = LoadDay();
  day.state.gpus.push_back({{"spare", 0}, &A100(), {}});
  std::string used = day.state.gpus.front().id.node;
  day.state.gpus.push_back({{used, 8}, &A100(), {}});
  YAML::Node spec = YAML::Load(MigPartedConfig(day.state));
  EXPECT_FALSE(spec["mig-configs"]["spare"].IsDefined());
  for (const YAML::Node& entry : spec["mig-configs"][used]) {
    EXPECT_NE(entry["devices"][0].as<int>(), 8);
    EXPECT_GT(entry["mig-devices"].size(), 0u);
  }
}

// The gpu-operator flavour writes the ConfigMap the Operator's MIG
// manager reads (key config.yaml) by the Operator's conventions, and no
// bare mig-parted file; its replicas are the device plugin's. A fleet with
// N distinct node layouts has N configs, shared by the nodes that have
// them, plus the Operator's all-disabled and all-enabled.
TEST(ExportTest, GpuOperatorFlavourWritesTheMigManagersConfigMap) {
  Loaded day = LoadDay();
  ExportOptions options;
  options.partitioner = Partitioner::kGpuOperator;
  auto files = Export(day.state, options);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_TRUE(files->mig_parted.empty());
  YAML::Node map = YAML::Load(files->mig_manager);
  EXPECT_EQ(map["kind"].as<std::string>(), "ConfigMap");
  EXPECT_EQ(map["metadata"]["name"].as<std::string>(), "custom-mig-config");
  EXPECT_EQ(map["metadata"]["namespace"].as<std::string>(), "gpu-operator");
  YAML::Node per_node = YAML::Load(MigPartedConfig(day.state))["mig-configs"];
  YAML::Node configs =
      YAML::Load(map["data"]["config.yaml"].as<std::string>())["mig-configs"];
  EXPECT_EQ(configs["all-disabled"][0]["mig-enabled"].as<bool>(), false);
  EXPECT_EQ(configs["all-disabled"][0]["devices"].as<std::string>(), "all");
  EXPECT_EQ(configs["all-enabled"][0]["mig-enabled"].as<bool>(), true);
  // day's three nodes have three layouts; a fourth node with node-0's
  // layout shares node-0's config.
  EXPECT_EQ(configs.size(), 2u + per_node.size());
  ClusterState more = day.state;
  for (const GpuState& g : day.state.gpus) {
    if (g.id.node != "node-0") continue;
    GpuState copy = g;
    copy.id.node = "node-3";
    more.gpus.push_back(copy);
  }
  more.Sort();
  std::string shared = MigManagerConfigMap(more);
  YAML::Node shared_configs =
      YAML::Load(YAML::Load(shared)["data"]["config.yaml"]
                     .as<std::string>())["mig-configs"];
  EXPECT_EQ(shared_configs.size(), configs.size());
  EXPECT_NE(shared.find("kubectl label node node-0 node-3 "
                        "nvidia.com/mig.config=migserve-"),
            std::string::npos)
      << shared;
  auto body = [](const std::string& text) {
    return text.substr(text.find('\n'));  // after the header's first line
  };
  EXPECT_EQ(body(files->replicas),
            body(ReplicaObjects(day.state, ExportOptions()).value()));
  ExpectGolden(files->mig_manager, "day/mig-manager.yaml");
}

// Sums, per service, the replicas that the objects run and the throughput
// the deployment gives them: every replica is exported exactly once.
TEST(ExportTest, EveryReplicaIsRunExactlyOnceInBothFlavours) {
  Loaded day = LoadDay();
  std::map<std::string, int> want;
  for (const GpuState& g : day.state.gpus) {
    for (const Slot& s : g.slots) {
      if (s.replica) ++want[s.replica->service];
    }
  }
  for (Partitioner flavor : {Partitioner::kAgent, Partitioner::kDra}) {
    ExportOptions options;
    options.partitioner = flavor;
    auto text = ReplicaObjects(day.state, options);
    ASSERT_TRUE(text.ok());
    std::map<std::string, int> got;
    int claims = 0;
    for (const YAML::Node& doc : YAML::LoadAll(*text)) {
      std::string kind = doc["kind"].as<std::string>();
      if (kind == "ResourceClaim") {
        ++claims;
        continue;
      }
      ASSERT_EQ(kind, "Deployment");
      EXPECT_EQ(doc["spec"]["template"]["spec"]["nodeSelector"]
                   ["kubernetes.io/hostname"]
                       .as<std::string>(),
                doc["metadata"]["labels"][kLabelNode].as<std::string>());
      got[doc["metadata"]["labels"][kLabelService].as<std::string>()] +=
          doc["spec"]["replicas"].as<int>();
    }
    EXPECT_EQ(got, want);
    int total = 0;
    for (const auto& [s, n] : want) total += n;
    EXPECT_EQ(claims, flavor == Partitioner::kDra ? total : 0);
  }
}

// A service that asked for min_replicas gets a disruption budget over its
// replicas (one down at a time); a service that did not, or has no
// replica, gets none.
TEST(ExportTest, ServicesWithMinReplicasGetADisruptionBudget) {
  Loaded day = LoadDay();
  std::string service;
  for (const Slot& s : day.state.gpus[0].slots) {
    if (s.replica) service = s.replica->service;
  }
  ASSERT_FALSE(service.empty());
  ExportOptions options;
  options.min_replicas = {{service, 2}, {"absent", 3}};
  auto text = ReplicaObjects(day.state, options);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  std::vector<YAML::Node> budgets;
  for (const YAML::Node& doc : YAML::LoadAll(*text)) {
    if (doc["kind"].as<std::string>() == "PodDisruptionBudget") {
      budgets.push_back(doc);
    }
  }
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0]["spec"]["maxUnavailable"].as<int>(), 1);
  EXPECT_EQ(budgets[0]["spec"]["selector"]["matchLabels"][kLabelService]
                .as<std::string>(),
            service);
  EXPECT_EQ(budgets[0]["metadata"]["namespace"].IsDefined(), false);
}

TEST(ExportTest, LabelValuesStayStringsAndNamesAreDnsLabels) {
  EXPECT_EQ(DnsLabel("BERT_large.v2--x-"), "bert-large-v2-x");
  std::string longest(80, 'a');
  std::string name = DnsLabel(longest);
  EXPECT_EQ(name.size(), 63u);
  EXPECT_NE(name, DnsLabel(longest + "b"));
  EXPECT_TRUE(CheckLabelValue("resnet50-a", "service").ok());
  EXPECT_FALSE(CheckLabelValue("bad name", "service").ok());
  EXPECT_FALSE(CheckLabelValue("-x", "service").ok());
  Loaded day = LoadDay();
  ExportOptions options;
  options.partitioner = Partitioner::kDra;
  auto text = ReplicaObjects(day.state, options);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("migserve.io/gpu: \"0\""), std::string::npos);
}

TEST(ExportTest, RefusesAServiceThatCannotBeALabel) {
  Loaded day = LoadDay();
  for (GpuState& g : day.state.gpus) {
    for (Slot& s : g.slots) {
      if (s.replica) s.replica->service = "has space";
    }
  }
  auto text = ReplicaObjects(day.state, ExportOptions());
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("\"has space\""), std::string::npos);
}

}  // namespace
}  // namespace migserve::kubernetes

namespace migserve::kubernetes {
namespace {

// The ServingTarget's schema (deploy/base/crd.yaml) lists every field a
// deployment's service is written with, and nothing else: an API server
// prunes a field its schema lacks (issue 92: a user's field there was kept,
// then dropped by the autoscaler's next write; a token term added to the
// deployment and not to the schema would be dropped at every write).
TEST(ServingTargetSchemaTest, ListsEveryFieldOfADeploymentsService) {
  YAML::Node crd = YAML::LoadFile(SourcePath("deploy/base/crd.yaml"));
  YAML::Node service =
      crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
         ["spec"]["properties"]["services"]["items"];
  ASSERT_TRUE(service.IsMap());
  EXPECT_FALSE(service["x-kubernetes-preserve-unknown-fields"]);
  std::set<std::string> listed;
  for (const auto& p : service["properties"]) {
    listed.insert(p.first.as<std::string>());
  }
  deployment::Deployment d;
  d.gpu = "A100-SXM4-80GB";
  workload::Service s;
  s.name = "chat";
  s.model = "llama-3.1-8b";
  s.throughput = *Rate::Of(2);
  s.latency_ms = 100;
  s.min_replicas = 2;
  s.kind = *workload::ParseServiceKind("llm");
  s.tokens = llm::LlmTerms{500, 50, 100, 50, 0.5, 0.5, 100, 0.5, 1000};
  d.services.push_back(s);
  nlohmann::json written =
      nlohmann::json::parse(deployment::FormatDeployment(d));
  std::set<std::string> fields;
  for (const auto& [key, value] : written["services"][0].items()) {
    fields.insert(key);
  }
  EXPECT_EQ(listed, fields);
}

}  // namespace
}  // namespace migserve::kubernetes
