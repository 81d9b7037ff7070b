// docs/kubernetes.md's procedures run as written (issue 90): each command
// is read from the docs and run with the real kubectl against the stand-in
// API server, beside a running `migserve controller`, and its documented
// outcome asserted.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <regex>
#include <thread>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "e2e/testing/docs_commands.h"
#include "e2e/testing/kubernetes_e2e_fixture.h"
#include "kube/serving_target.h"
#include "kube/testing/real_kubectl.h"
#include "util/interrupt.h"

namespace migserve::e2e {
namespace {

using DocumentedProceduresTest = KubernetesE2eTest;

// "Drain and remove": the empty target patched in as the docs say, then
// waited for: the controller deletes every replica and every route's
// backends, reports Ready at the new generation, and stays up (issue 90:
// the same empty target crashed `optimize --from` and the autoscaler,
// OptimizeFromCliTest.FromAnEmptyClusterEveryGpuIsNew; here the
// controller takes it).
TEST_F(DocumentedProceduresTest, DrainAndRemoveEmptiesTheTarget) {
  if (std::string why = kube::KubectlUnusable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string patch =
      DocsCommand("docs/kubernetes.md", "kubectl -n migserve-replicas patch");
  const std::string wait =
      DocsCommand("docs/kubernetes.md", "kubectl -n migserve-replicas wait");
  ASSERT_NE(patch, "") << "docs/kubernetes.md: the drain's patch is gone";
  ASSERT_NE(wait, "") << "docs/kubernetes.md: the drain's wait is gone";
  deployment::Deployment day = ShippedDeployment("day"), empty = day;
  empty.services.clear();
  empty.gpus.clear();
  Start(day);
  Watch(controller::MakeGoal(day, empty));
  const std::string path =
      kube::ServingTargetPath(kNamespace, "migserve-target");
  ASSERT_TRUE(CreateTarget("day"));
  CliResult result;
  std::thread loop = ControllerOnTheTarget(&result);
  // kubectl as the administrator, the docs' command after its "kubectl".
  const std::string kubectl =
      fmt::format("kubectl --kubeconfig {} --cache-dir {}/kubectl-cache",
                  Kubeconfig("drain-kubeconfig", kToken), testing::TempDir());
  auto docs = [&](const std::string& command) {
    return Shell(kubectl + command.substr(std::string("kubectl").size()));
  };
  std::pair<int, std::string> at_day =
      Shell(kubectl +
            " -n migserve-replicas wait --for=condition=Ready "
            "--timeout=120s servingtarget/migserve-target");
  auto replicas = [&] {
    int n = 0;
    for (const Json& pod : server_.List(kPods)) {
      n += !k8s::Label(pod, k8s::kLabelService).empty();
    }
    return n;
  };
  const int at_start = replicas();
  std::pair<int, std::string> patched = docs(patch);
  std::pair<int, std::string> waited = docs(wait);
  std::raise(SIGTERM);
  loop.join();
  EXPECT_EQ(at_day.first, 0) << at_day.second << result.err;
  EXPECT_EQ(patched.first, 0) << patched.second;
  EXPECT_NE(patched.second.find("servingtarget.migserve.io/migserve-target "
                                "patched"),
            std::string::npos)
      << patched.second;
  EXPECT_EQ(waited.first, 0) << waited.second << result.err;
  EXPECT_NE(waited.second.find("condition met"), std::string::npos)
      << waited.second;
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(Charged(), std::vector<std::string>{});
  // No replica of the controller's is left, and no route sends anywhere.
  EXPECT_GT(at_start, 50);
  EXPECT_EQ(replicas(), 0);
  for (const Json& route : server_.List(kRoutes)) {
    EXPECT_EQ(route["spec"]["rules"][0].value("backendRefs", Json::array()),
              Json::array())
        << route["metadata"]["name"];
  }
  Json status = server_.Get(path).value()["status"];
  EXPECT_EQ(status["observedGeneration"], 2);
  EXPECT_EQ(status["gpusHeld"], 0);
}

// "Then give the autoscaler its inputs, and the controller its target":
// the docs' block as a reader pastes it, P.csv, W.yaml and D.json the
// shipped day, with the real kubectl and the built migserve; the
// controller (which exits while no target exists, its pod restarting
// until there is one) runs from the target's apply to the end of the
// `kubectl wait`. The cluster starts at night, so the wait ends only once
// the controller has moved it to day.
TEST_F(DocumentedProceduresTest, TheInputsAndTheTargetAsTheDocsGiveThem) {
  if (std::string why = kube::KubectlUnusable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string block =
      DocsBlock("docs/kubernetes.md", "kubectl create configmap");
  const size_t wait_at = block.find("\nkubectl wait ");
  ASSERT_NE(wait_at, std::string::npos)
      << "docs/kubernetes.md: the target's block or its wait is gone";
  const std::string dir = testing::TempDir() + "/docs-target";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const auto& [name, source] :
       {std::pair{"P.csv", "data/profiles/a100-80gb.csv"},
        std::pair{"W.yaml", "data/workloads/day.yaml"},
        std::pair{"D.json", "data/deployments/day.json"}}) {
    std::filesystem::copy_file(testing::SourcePath(source), dir + "/" + name);
  }
  // kubectl as the administrator and migserve as built, under the names
  // the docs use.
  const std::string preamble = fmt::format(
      "set -e\ncd {}\n"
      "kubectl() {{ command kubectl --kubeconfig {} --cache-dir "
      "{}/kubectl-cache \"$@\"; }}\nmigserve() {{ {} \"$@\"; }}\n",
      dir, Kubeconfig("docs-kubeconfig", kToken), dir, MIGSERVE_BINARY);
  auto run = [&](const std::string& name, const std::string& commands) {
    std::string script = testing::WriteTempFile(name, preamble + commands);
    return Shell("bash " + script);
  };
  deployment::Deployment night = ShippedDeployment("night"),
                         day = ShippedDeployment("day");
  Start(night);
  Watch(controller::MakeGoal(night, day));
  std::pair<int, std::string> given =
      run("docs-inputs.sh", block.substr(0, wait_at + 1));
  CliResult result;
  std::thread loop = ControllerOnTheTarget(&result);
  // The docs wait up to 30 minutes for a real cluster's replicas; the
  // stand-in's are Ready at once, so a wait that does not end within two
  // is a failure, not a slow cluster.
  std::string wait = block.substr(wait_at + 1);
  const size_t timeout_at = wait.find("--timeout=30m");
  ASSERT_NE(timeout_at, std::string::npos) << wait;
  wait.replace(timeout_at, 13, "--timeout=120s");
  std::pair<int, std::string> waited = run("docs-wait.sh", wait);
  std::raise(SIGTERM);
  loop.join();
  ClearInterrupt();  // the files below are read after the controller's stop
  ASSERT_EQ(given.first, 0) << given.second;
  for (const char* said :
       {"configmap/migserve-autoscale-inputs created",
        "servingworkload.migserve.io/migserve-workload created",
        "servingtarget.migserve.io/migserve-target created"}) {
    EXPECT_NE(given.second.find(said), std::string::npos) << given.second;
  }
  EXPECT_EQ(waited.first, 0) << waited.second << result.err;
  EXPECT_NE(waited.second.find("condition met"), std::string::npos)
      << waited.second;
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(Charged(), std::vector<std::string>{});
  // What was applied is what the files say.
  Json inputs = server_
                    .Get(
                        "/api/v1/namespaces/migserve/configmaps/"
                        "migserve-autoscale-inputs")
                    .value();
  EXPECT_EQ(inputs["data"]["profiles.csv"], ReadFile(dir + "/P.csv").value());
  Json workload = server_
                      .Get(
                          "/apis/migserve.io/v1alpha1/namespaces/"
                          "migserve-replicas/servingworkloads/"
                          "migserve-workload")
                      .value();
  EXPECT_EQ(workload["spec"]["services"].size(), 5u) << workload.dump();
  Json target =
      server_.Get(kube::ServingTargetPath(kNamespace, "migserve-target"))
          .value();
  EXPECT_EQ(target["spec"]["gpus"].size(), day.gpus.size());
  EXPECT_EQ(target["status"]["observedGeneration"], 1);
  // The cluster is at day: a replica pod per replica of day's.
  int replicas = 0, want = 0;
  for (const Json& pod : server_.List(kPods)) {
    replicas += !k8s::Label(pod, k8s::kLabelService).empty();
  }
  for (const deployment::DeployedGpu& g : day.gpus) {
    for (const deployment::PlacedInstance& i : g.instances) {
      want += i.service.has_value();
    }
  }
  EXPECT_EQ(replicas, want);
}

// "Adopting pods": replicas an older migserve made (before the owner
// annotation) and a journal that knows none of them (moved away). The
// docs' commands with the real kubectl: one pod annotated by name, the rest
// by the bulk command (which leaves the one already annotated as it is),
// then the controller run once with --adopt: it adopts every replica, says
// how many, and takes day to night counting them, every floor kept.
TEST_F(DocumentedProceduresTest, AdoptingPodsTakesOverAnOlderMigservesPods) {
  if (std::string why = kube::KubectlUnusable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::vector<std::string> annotate =
      DocsIndentedCommands("docs/kubernetes.md",
                           "kubectl -n NAMESPACE annotate", "## Adopting pods");
  ASSERT_EQ(annotate.size(), 2u)
      << "docs/kubernetes.md, \"Adopting pods\": its two annotate commands";
  seed_ledger_ = false;
  deployment::Deployment day = ShippedDeployment("day"),
                         night = ShippedDeployment("night");
  Start(day);
  std::vector<std::string> replicas;
  for (const Json& pod : server_.List(kPods)) {
    if (k8s::Label(pod, k8s::kLabelService).empty()) continue;
    replicas.push_back(pod["metadata"]["name"]);
    // As a migserve before the annotation made it.
    ASSERT_TRUE(
        server_.Update(std::string(kPods) + "/" + replicas.back(), [](Json* p) {
          (*p)["metadata"]["annotations"].erase(k8s::kAnnotationOwner);
        }));
  }
  ASSERT_GT(replicas.size(), 50u);
  const std::string kubectl =
      fmt::format("kubectl --kubeconfig {} --cache-dir {}/kubectl-cache",
                  Kubeconfig("adopt-kubeconfig", kToken), testing::TempDir());
  auto docs = [&](std::string command, const std::string& name) {
    command = std::regex_replace(command, std::regex("NAMESPACE"), kNamespace);
    command = std::regex_replace(command, std::regex("\\bNAME\\b"), name);
    return Shell(kubectl + command.substr(std::string("kubectl").size()));
  };
  std::pair<int, std::string> one = docs(annotate[0], replicas[0]);
  EXPECT_EQ(one.first, 0) << one.second;
  EXPECT_EQ(one.second, "pod/" + replicas[0] + " annotated\n");
  std::pair<int, std::string> all = docs(annotate[1], "");
  EXPECT_EQ(all.first, 0) << all.second;
  for (const std::string& name : replicas) {
    EXPECT_NE(all.second.find("pod/" + name + " annotated"), std::string::npos)
        << all.second;
  }
  Watch(controller::MakeGoal(day, night));
  CliResult adopted = Controller(
      testing::SourcePath("data/deployments/night.json"), {"--adopt"});
  ASSERT_EQ(adopted.code, 0) << adopted.err;
  EXPECT_NE(adopted.err.find(fmt::format(
                "adopted {} pods annotated migserve.io/owner=migserve-"
                "controller",
                replicas.size())),
            std::string::npos)
      << adopted.err;
  ExpectInvariantAndTarget();
  EXPECT_EQ(Charged(), std::vector<std::string>{});
}

// "Upgrade the proxy": export again with the new image and apply the
// docs' way, after the controller has written routes of its own to the
// routes ConfigMap. The image moves, the roll keeps maxUnavailable 0, and
// the routes are still the controller's (a plain `kubectl apply -f
// proxy.yaml` put back the export's: issue 90, a documented procedure
// that would have routed by a stale deployment).
TEST_F(DocumentedProceduresTest, AProxyUpgradeKeepsTheControllersRoutes) {
  if (std::string why = kube::KubectlUnusable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::vector<std::string> export_ = DocsIndentedCommands(
      "docs/kubernetes.md", "migserve export -d D.json", "**Upgrade.**");
  const std::vector<std::string> apply = DocsIndentedCommands(
      "docs/kubernetes.md", "kubectl apply -f DIR/proxy.yaml", "**Upgrade.**");
  ASSERT_EQ(export_.size(), 1u) << "docs/kubernetes.md: the proxy's export";
  ASSERT_EQ(apply.size(), 1u) << "docs/kubernetes.md: the proxy's apply";
  const std::string dir = testing::TempDir() + "/proxy-upgrade";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string deployment = dir + "/D.json";
  ASSERT_EQ(
      Cli({"optimize", "-w", testing::SourcePath("data/workloads/night.yaml"),
           "-p", testing::SourcePath("data/profiles/a100-80gb.csv"), "-o",
           deployment})
          .code,
      0);
  const std::string kubectl =
      fmt::format("kubectl --kubeconfig {} --cache-dir {}/kubectl-cache",
                  Kubeconfig("proxy-kubeconfig", kToken), testing::TempDir());
  // The docs' command with its placeholders filled, kubectl as the
  // administrator and migserve as built.
  auto docs = [&](std::string command, char digit, const std::string& out) {
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"D.json", deployment},
          {"S.yaml", testing::SourcePath("examples/triton/serving.yaml")},
          {"REGISTRY", "registry.example"},
          {"DIGEST", std::string(64, digit)},
          {"DIR", out}}) {
      command = std::regex_replace(command, std::regex(from), to);
    }
    if (command.starts_with("kubectl")) {
      return Shell(kubectl + command.substr(std::string("kubectl").size()));
    }
    return Shell(std::string(MIGSERVE_BINARY) +
                 command.substr(std::string("migserve").size()));
  };
  // The first install applies the whole file.
  ASSERT_EQ(docs(export_[0], 'a', dir + "/a").first, 0);
  std::pair<int, std::string> first =
      Shell(kubectl + " apply -f " + dir + "/a/proxy.yaml");
  ASSERT_EQ(first.first, 0) << first.second;
  // The controller moves the routes on.
  const std::string routes =
      "/api/v1/namespaces/migserve-replicas/configmaps/migserve-proxy-routes";
  Json controllers;
  ASSERT_TRUE(server_.Update(routes, [&](Json* map) {
    (*map)["data"]["generation"] = "7";
    for (auto& [key, value] : (*map)["data"].items()) {
      if (key.starts_with("route.")) value = value.get<std::string>() + " ";
    }
    controllers = (*map)["data"];
  }));
  ASSERT_EQ(docs(export_[0], 'b', dir + "/b").first, 0);
  std::pair<int, std::string> upgraded = docs(apply[0], 'b', dir + "/b");
  ASSERT_EQ(upgraded.first, 0) << upgraded.second;
  EXPECT_NE(upgraded.second.find("deployment.apps/migserve-proxy configured"),
            std::string::npos)
      << upgraded.second;
  EXPECT_EQ(upgraded.second.find("migserve-proxy-routes"), std::string::npos)
      << upgraded.second;
  const Json live = server_.Get(routes).value()["data"];
  EXPECT_EQ(live["generation"], "7");
  EXPECT_TRUE(live == controllers) << "the routes are not the controller's";
  const Json proxy =
      server_
          .Get(
              "/apis/apps/v1/namespaces/migserve-replicas/deployments/"
              "migserve-proxy")
          .value();
  EXPECT_EQ(proxy["spec"]["template"]["spec"]["containers"][0]["image"],
            "registry.example/migserve@sha256:" + std::string(64, 'b'));
  EXPECT_EQ(proxy["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 0);
  EXPECT_EQ(proxy["spec"]["template"]["spec"]["terminationGracePeriodSeconds"],
            45);
}

}  // namespace
}  // namespace migserve::e2e
