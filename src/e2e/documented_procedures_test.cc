// docs/kubernetes.md's procedures run as written (issue 90): each command
// is read from the docs and run with the real kubectl against the stand-in
// API server, beside a running `migserve controller`, and its documented
// outcome asserted.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <regex>
#include <thread>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "e2e/testing/kubernetes_e2e_fixture.h"
#include "kube/serving_target.h"

namespace migserve::e2e {
namespace {

using DocumentedProceduresTest = KubernetesE2eTest;

// The command in `doc` in backticks that starts with `start`, its line
// breaks and runs of spaces made one space, as a reader pastes it.
std::string DocsCommand(const std::string& doc, const std::string& start) {
  std::string text = ReadFile(testing::SourcePath(doc)).value();
  size_t at = text.find("`" + start);
  if (at == std::string::npos) return "";
  size_t end = text.find('`', at + 1);
  std::string command = text.substr(at + 1, end - at - 1);
  return std::regex_replace(command, std::regex("\\s+"), " ");
}

// "Drain and remove": the empty target patched in as the docs say, then
// waited for: the controller deletes every replica and every route's
// backends, reports Ready at the new generation, and stays up (issue 90:
// the same empty target crashed `optimize --from` and the autoscaler,
// OptimizeFromCliTest.FromAnEmptyClusterEveryGpuIsNew; here the
// controller takes it).
TEST_F(DocumentedProceduresTest, DrainAndRemoveEmptiesTheTarget) {
  if (std::system("command -v kubectl >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no kubectl";
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

}  // namespace
}  // namespace migserve::e2e
