#include "cluster/kubernetes/export.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "cluster/kubernetes/names.h"
#include "deployment/deployment_json.h"
#include "mig/gpu_catalog.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::cluster::kubernetes {
namespace {

using testing::SourcePath;

const mig::GpuModel& A100() {
  return *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
}

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
  std::string path = SourcePath("src/cluster/kubernetes/testdata/" + name);
  if (std::getenv("MIGSERVE_UPDATE_GOLDEN") != nullptr) {
    ASSERT_TRUE(WriteFileAtomic(path, text).ok());
  }
  auto golden = ReadFile(path);
  ASSERT_TRUE(golden.ok()) << golden.status().ToString();
  EXPECT_EQ(text, *golden) << "differs from " << path
                           << " (MIGSERVE_UPDATE_GOLDEN=1 to rewrite)";
}

TEST(ExportTest, DayAndNightMatchTheGoldenFiles) {
  Loaded day = LoadDay();
  ExportOptions options;
  auto plugin = Export(day.state, options);
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  ExpectGolden(plugin->mig_parted, "day/mig-parted.yaml");
  ExpectGolden(plugin->replicas, "day/replicas.yaml");
  Loaded night = Load("night.json");
  options.flavor = Flavor::kDra;
  auto dra = Export(night.state, options);
  ASSERT_TRUE(dra.ok());
  ExpectGolden(dra->mig_parted, "night-dra/mig-parted.yaml");
  ExpectGolden(dra->replicas, "night-dra/replicas.yaml");
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
  for (Flavor flavor : {Flavor::kDevicePlugin, Flavor::kDra}) {
    ExportOptions options;
    options.flavor = flavor;
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
    EXPECT_EQ(claims, flavor == Flavor::kDra ? total : 0);
  }
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
  options.flavor = Flavor::kDra;
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
}  // namespace migserve::cluster::kubernetes
