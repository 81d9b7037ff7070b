// docs/kubernetes.md's install, upgrade and "remove at once" uninstall,
// and its install on a GPU Operator cluster, run as written (issue 90):
// `tools/install.sh` with the real kubectl against a fresh stand-in API server,
// which serves discovery and OpenAPI for every kind the install applies. Only
// the image push is not the real one: the registry is out of the test's reach,
// so `skopeo` is a script on PATH that records what it was asked to copy.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "boundary/input_file.h"
#include "e2e/testing/docs_commands.h"
#include "kube/testing/api_server_standin.h"
#include "kube/testing/real_kubectl.h"
#include "kube/testing/test_certificate.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::e2e {
namespace {

using Json = nlohmann::json;

constexpr char kToken[] = "install-admin";
constexpr char kRegistry[] = "registry.example.com/platform";

// A fresh stand-in, kubectl on it as the administrator, and the tools the
// procedures run.
class ProcedureTest : public ::testing::Test {
 protected:
  ProcedureTest()
      : dir_(Fresh(testing::TempDir() + "/install-procedure")),
        tls_(kube::MakeTestCertificate(dir_ + "/tls").value()),
        server_({tls_.cert_file, tls_.key_file, kToken}) {}

  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok()) << "start";
    std::filesystem::create_directories(dir_ + "/bin");
    kubeconfig_ = dir_ + "/kubeconfig";
    ASSERT_TRUE(
        WriteFileAtomic(kubeconfig_, server_.KubeconfigYaml("", kToken)).ok());
    digest_ = "sha256:" + std::string(64, 'c');
    MakeImage("image", digest_, "0.0.0");
    ASSERT_TRUE(
        WriteFileAtomic(dir_ + "/bin/skopeo",
                        "#!/bin/sh\necho \"$@\" >>" + dir_ + "/skopeo.log\n")
            .ok());
    std::filesystem::permissions(dir_ + "/bin/skopeo",
                                 std::filesystem::perms::owner_all);
  }

  // `dir`, emptied: each test's files (the recorded pushes) its own.
  static std::string Fresh(const std::string& dir) {
    std::filesystem::remove_all(dir);
    return dir;
  }

  // What `make image` leaves in `name`: the digest and the OCI archive,
  // whose index names the version the push tags.
  void MakeImage(const std::string& name, const std::string& digest,
                 const std::string& version) {
    const std::string at = dir_ + "/" + name;
    std::filesystem::create_directories(at);
    ASSERT_TRUE(WriteFileAtomic(at + "/digest", digest + "\n").ok());
    ASSERT_TRUE(WriteFileAtomic(at + "/index.json",
                                R"({"schemaVersion": 2, "manifests": [)"
                                R"({"annotations": {"org.opencontainers.)"
                                R"(image.ref.name": ")" +
                                    version + R"("}}]})")
                    .ok());
    ASSERT_EQ(Shell(fmt::format(
                        "tar -C {0} -cf {0}/migserve.oci.tar ./index.json", at))
                  .first,
              0);
  }

  // Runs `command` from the source tree, kubectl pointed at the stand-in
  // as the cluster's administrator: its exit status and both streams.
  std::pair<int, std::string> Shell(const std::string& command) {
    return testing::RunShell(
        fmt::format("cd {} && export PATH={}/bin:$PATH KUBECONFIG={} "
                    "KUBECACHEDIR={}/cache && {}",
                    testing::SourcePath(""), dir_, kubeconfig_, dir_, command));
  }

  // The objects of `rendered` (a file of manifests) the cluster holds, as
  // kubectl names them.
  std::set<std::string> Held(const std::string& rendered) {
    std::pair<int, std::string> got =
        Shell("kubectl get --ignore-not-found -o name -f " + rendered);
    EXPECT_EQ(got.first, 0) << got.second;
    std::set<std::string> names;
    std::istringstream lines(got.second);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) names.insert(line);
    }
    return names;
  }

  std::string dir_;
  kube::TestCertificate tls_;
  kube::ApiServerStandIn server_;
  std::string kubeconfig_, digest_;
};

// An install's flags: its overlay, its namespace ("": the two default
// ones), and whether it brings the Prometheus Operator's monitors.
struct InstallFlags {
  const char* overlay;
  const char* namespace_;
  bool monitoring;
};

class InstallProcedureTest
    : public ProcedureTest,
      public ::testing::WithParamInterface<InstallFlags> {
 protected:
  // The Prometheus Operator's definitions, as its chart installs them (as
  // much of them as the install's monitors touch).
  void PrometheusOperator() {
    std::string crds;
    for (const auto& [plural, kind] :
         {std::pair{"podmonitors", "PodMonitor"},
          std::pair{"servicemonitors", "ServiceMonitor"},
          std::pair{"prometheusrules", "PrometheusRule"}}) {
      crds += fmt::format(
          "---\napiVersion: apiextensions.k8s.io/v1\n"
          "kind: CustomResourceDefinition\n"
          "metadata: {{name: {0}.monitoring.coreos.com}}\n"
          "spec:\n  group: monitoring.coreos.com\n  scope: Namespaced\n"
          "  names: {{plural: {0}, kind: {1}}}\n  versions:\n"
          "    - name: v1\n      served: true\n      storage: true\n"
          "      schema:\n        openAPIV3Schema:\n          type: object\n"
          "          x-kubernetes-preserve-unknown-fields: true\n",
          plural, kind);
    }
    ASSERT_TRUE(server_.ApplyManifests(crds, "prometheus-operator.yaml").ok());
  }
};

// "" where the install can run here: kubectl 1.27 or later, python3.
std::string CannotInstall() {
  if (std::string why = kube::KubectlUnusable(); !why.empty()) return why;
  return std::system("command -v python3 >/dev/null 2>&1") == 0 ? ""
                                                                : "no python3";
}

// Install, upgrade, then remove at once, as docs/kubernetes.md says: the
// install applies every object it renders; the upgrade moves each image
// and keeps the rest; the uninstall deletes each one
// that carries its label (and, with the namespace, whatever is in it),
// keeps and names an object of the same name someone else made, and
// refuses, deleting nothing, while a namespace of the install exists that
// migserve did not make.
TEST_P(InstallProcedureTest, InstallUpgradeThenRemoveAtOnce) {
  if (std::string why = CannotInstall(); !why.empty()) GTEST_SKIP() << why;
  const std::string overlay = GetParam().overlay,
                    chosen = GetParam().namespace_;
  const std::string flags =
      fmt::format("--overlay {}{}{}", overlay,
                  chosen.empty() ? "" : " --namespace " + chosen,
                  GetParam().monitoring ? " --monitoring" : "");
  if (GetParam().monitoring) PrometheusOperator();
  // Where the controller goes: the namespace chosen, else migserve.
  const std::string home = chosen.empty() ? "migserve" : chosen;
  // Taken only if free: a namespace someone else made is refused before
  // anything is applied.
  // (Made by apply: `kubectl create namespace` sends protobuf, which the
  // stand-in does not read.)
  ASSERT_EQ(Shell("printf 'apiVersion: v1\\nkind: Namespace\\nmetadata: "
                  "{name: team-a}\\n' | kubectl apply -f -"),
            std::pair(0, std::string("namespace/team-a created\n")));
  std::pair<int, std::string> refused =
      Shell(fmt::format("tools/install.sh --registry {} --image-dir {}/image "
                        "--namespace team-a",
                        kRegistry, dir_));
  EXPECT_EQ(refused.first, 2) << refused.second;
  EXPECT_NE(refused.second.find("--namespace team-a: exists and was not made "
                                "by migserve"),
            std::string::npos)
      << refused.second;

  std::pair<int, std::string> installed = Shell(
      fmt::format("tools/install.sh --registry {} --image-dir {}/image {}",
                  kRegistry, dir_, flags));
  ASSERT_EQ(installed.first, 0) << installed.second;
  EXPECT_EQ(ReadFile(dir_ + "/skopeo.log").value(),
            fmt::format("copy --all --preserve-digests oci-archive:{0}/image/"
                        "migserve.oci.tar:0.0.0 docker://{1}/migserve:0.0.0\n",
                        dir_, kRegistry));
  // Every object it renders is on the cluster, its images by digest.
  const std::string rendered = dir_ + "/rendered.yaml";
  ASSERT_EQ(Shell(fmt::format("tools/install.sh --registry {} --digest {} {} "
                              "--render >{}",
                              kRegistry, digest_, flags, rendered))
                .first,
            0);
  const std::set<std::string> all = Held(rendered);
  std::pair<int, std::string> kinds = Shell("grep -c '^kind: ' " + rendered);
  EXPECT_EQ(std::to_string(all.size()) + "\n", kinds.second);
  EXPECT_GT(all.size(), 25u);
  EXPECT_TRUE(all.count("deployment.apps/migserve-controller"));
  EXPECT_TRUE(all.count("namespace/" + home));
  if (GetParam().monitoring) {
    EXPECT_TRUE(all.count("prometheusrule.monitoring.coreos.com/migserve"));
  }
  std::optional<Json> controller = server_.Get(
      "/apis/apps/v1/namespaces/" + home + "/deployments/migserve-controller");
  ASSERT_TRUE(controller.has_value());
  EXPECT_EQ((*controller)["spec"]["template"]["spec"]["containers"][0]["image"],
            fmt::format("{}/migserve@{}", kRegistry, digest_));

  // The upgrade: the install again with a new build. kubectl apply
  // patches each Deployment it changes (strategic merge patches), the new
  // image by digest and the rest as it was.
  const Json args_before =
      (*controller)["spec"]["template"]["spec"]["containers"][0]["args"];
  const std::string next = "sha256:" + std::string(64, 'd');
  MakeImage("image-next", next, "0.0.1");
  std::pair<int, std::string> upgraded = Shell(
      fmt::format("tools/install.sh --registry {} --image-dir {}/image-next {}",
                  kRegistry, dir_, flags));
  ASSERT_EQ(upgraded.first, 0) << upgraded.second;
  std::vector<std::string> says = {
      "deployment.apps/migserve-controller configured",
      "deployment.apps/migserve-autoscale configured",
      "namespace/" + home + " unchanged"};
  // The agent runs but where DRA's driver partitions.
  if (overlay != "dra") {
    says.push_back("daemonset.apps/migserve-agent configured");
  }
  for (const std::string& said : says) {
    EXPECT_NE(upgraded.second.find(said), std::string::npos) << upgraded.second;
  }
  controller = server_.Get("/apis/apps/v1/namespaces/" + home +
                           "/deployments/migserve-controller");
  ASSERT_TRUE(controller.has_value());
  const Json& container =
      (*controller)["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["image"], fmt::format("{}/migserve@{}", kRegistry, next));
  EXPECT_EQ(container["args"], args_before);
  EXPECT_EQ(Held(rendered), all);

  // A namespace of the install's name that migserve did not make (here:
  // its label taken off) stops the uninstall before it deletes anything.
  ASSERT_EQ(Shell("kubectl label namespace " + home +
                  " app.kubernetes.io/managed-by-")
                .first,
            0);
  std::pair<int, std::string> stopped =
      Shell("tools/install.sh --uninstall " + flags);
  EXPECT_EQ(stopped.first, 2) << stopped.second;
  EXPECT_NE(
      stopped.second.find("namespace " + home + ": was not made by migserve"),
      std::string::npos)
      << stopped.second;
  EXPECT_EQ(Held(rendered), all);
  ASSERT_EQ(Shell("kubectl label namespace " + home +
                  " app.kubernetes.io/managed-by=migserve")
                .first,
            0);

  // Someone's ConfigMap in migserve's namespace, and a ClusterRole of the
  // install's name that is no longer the install's.
  ASSERT_EQ(Shell("kubectl -n " + home +
                  " create configmap notes "
                  "--from-literal=a=b --dry-run=client -o yaml | kubectl "
                  "apply -f -")
                .first,
            0);
  ASSERT_EQ(Shell("kubectl label clusterrole migserve-viewer "
                  "app.kubernetes.io/part-of-")
                .first,
            0);
  std::pair<int, std::string> removed =
      Shell("tools/install.sh --uninstall " + flags);
  ASSERT_EQ(removed.first, 0) << removed.second;
  EXPECT_NE(removed.second.find("install: kept ClusterRole migserve-viewer: "
                                "not labelled app.kubernetes.io/part-of="
                                "migserve"),
            std::string::npos)
      << removed.second;
  EXPECT_EQ(Held(rendered),
            std::set<std::string>{"clusterrole.rbac.authorization.k8s.io/"
                                  "migserve-viewer"});
  EXPECT_FALSE(server_.Get("/api/v1/namespaces/" + home + "/configmaps/notes")
                   .has_value());
  // Namespaces it did not make are left alone.
  EXPECT_TRUE(server_.Get("/api/v1/namespaces/team-a").has_value());
  // Run again, it finds nothing of its own to delete.
  std::pair<int, std::string> again =
      Shell("tools/install.sh --uninstall " + flags);
  EXPECT_EQ(again.first, 0) << again.second;
  EXPECT_NE(again.second.find("install: 0 of the install's objects to delete"),
            std::string::npos)
      << again.second;
}

using GpuOperatorProcedureTest = ProcedureTest;

// "Install on a GPU Operator cluster", steps 1-4, as written: on a cluster
// whose Operator runs the `single` strategy and its default configs, the
// check names what will not work; the strategy patch, export's
// mig-manager.yaml applied, the ClusterPolicy pointed at it, the labels
// its header lists (the MIG manager then saying success, as it would),
// and the check passes.
TEST_F(GpuOperatorProcedureTest, StepByStepTheCheckPasses) {
  if (std::string why = kube::KubectlUnusable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string doc = "docs/kubernetes.md";
  const std::string section = "### Install on a GPU Operator cluster";
  const std::vector<std::string> patches =
      DocsCommands(doc, "kubectl patch clusterpolicies", section);
  const std::string exported =
      DocsCommand(doc, "migserve export -d D --flavor gpu-operator");
  const std::string apply =
      DocsCommand(doc, "kubectl apply -f out/mig-manager");
  const std::string check = DocsCommand(doc, "migserve doctor -d D");
  ASSERT_EQ(patches.size(), 2u) << "docs/kubernetes.md: the two patches";
  for (const std::string& c : {exported, apply, check}) {
    ASSERT_NE(c, "") << "docs/kubernetes.md: a step's command is gone";
  }
  // The Operator's objects: its ClusterPolicy's definition (as much as
  // the steps touch), the policy as installed, its MIG manager, and the
  // node night's GPUs are on, MIG-capable, at the Operator's default.
  ASSERT_TRUE(server_
                  .ApplyManifests(R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusterpolicies.nvidia.com}
spec:
  group: nvidia.com
  scope: Cluster
  names: {plural: clusterpolicies, singular: clusterpolicy, kind: ClusterPolicy}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
)",
                                  "clusterpolicy-crd.yaml")
                  .ok());
  server_.Put("/apis/nvidia.com/v1/clusterpolicies/cluster-policy",
              {{"apiVersion", "nvidia.com/v1"},
               {"kind", "ClusterPolicy"},
               {"metadata", {{"name", "cluster-policy"}}},
               {"spec",
                {{"mig", {{"strategy", "single"}}},
                 {"migManager",
                  {{"enabled", true},
                   {"config", {{"name", "default-mig-parted-config"}}}}}}}});
  server_.Put(
      "/apis/apps/v1/namespaces/gpu-operator/daemonsets/nvidia-mig-manager",
      {{"metadata", {{"labels", {{"app", "nvidia-mig-manager"}}}}}});
  server_.Put("/api/v1/nodes/node-0",
              {{"metadata",
                {{"labels",
                  {{"nvidia.com/mig.capable", "true"},
                   {"nvidia.com/mig.config", "all-disabled"}}}}}});
  std::filesystem::copy_file(testing::SourcePath("data/deployments/night.json"),
                             dir_ + "/D");
  // Run in dir_, `migserve` the built one.
  auto step = [&](const std::string& command) {
    return Shell(fmt::format("cd {} && migserve() {{ {} \"$@\"; }} && {}", dir_,
                             MIGSERVE_BINARY, command));
  };
  std::pair<int, std::string> before = step(check);
  EXPECT_EQ(before.first, 1) << before.second;
  EXPECT_NE(before.second.find("problem: "), std::string::npos)
      << before.second;
  for (const std::string& c : {patches[0], exported, apply, patches[1]}) {
    std::pair<int, std::string> ran = step(c);
    ASSERT_EQ(ran.first, 0) << c << ": " << ran.second;
  }
  // Step 3: the label lines mig-manager.yaml's header lists, then the MIG
  // manager's success.
  std::string header = ReadFile(dir_ + "/out/mig-manager.yaml").value();
  int labelled = 0;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("kubectl label node ");
    if (line.rfind("#", 0) != 0 || at == std::string::npos) continue;
    std::pair<int, std::string> ran = step(line.substr(at));
    ASSERT_EQ(ran.first, 0) << line << ": " << ran.second;
    ++labelled;
  }
  EXPECT_EQ(labelled, 1);
  ASSERT_EQ(step("kubectl label node node-0 "
                 "nvidia.com/mig.config.state=success --overwrite")
                .first,
            0);
  std::pair<int, std::string> after = step(check);
  EXPECT_EQ(after.first, 0) << after.second;
  EXPECT_EQ(after.second.find("problem: "), std::string::npos) << after.second;
  EXPECT_NE(after.second.find("ok: ClusterPolicy cluster-policy: MIG "
                              "strategy mixed"),
            std::string::npos)
      << after.second;
}

// Each partitioner's overlay in the two default namespaces, and the
// default partitioner in one namespace of one's choice with the monitors.
INSTANTIATE_TEST_SUITE_P(
    Overlays, InstallProcedureTest,
    ::testing::Values(InstallFlags{"gpu-operator", "platform-gpu", true},
                      InstallFlags{"device-plugin", "", false},
                      InstallFlags{"dra", "", false}),
    [](const ::testing::TestParamInfo<InstallFlags>& p) {
      std::string name = std::string(p.param.overlay) +
                         (*p.param.namespace_ ? "_in_its_own_namespace" : "") +
                         (p.param.monitoring ? "_with_monitors" : "");
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

}  // namespace
}  // namespace migserve::e2e
