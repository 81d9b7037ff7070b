// The agent as a process (issue 36: it aborted on a mistyped request and
// crash-looped): the real `migserve agent` binary, its NVML a shared
// library opened through the same dlopen path as NVIDIA's, against the
// stand-in API server over HTTPS. Requests no controller of ours writes are
// answered with a status naming the field, the process keeps running and
// carries out the next good request, and SIGTERM ends it with exit 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <set>
#include <string>

#include "boundary/input_file.h"
#include "kube/testing/api_server_standin.h"
#include "kube/testing/test_certificate.h"
#include "kubernetes/names.h"
#include "kubernetes/partition/mig_annotations.h"
#include "mig/gpu_catalog.h"
#include "util/test_util.h"

namespace migserve::e2e {
namespace {

namespace k8s = kubernetes;
using Json = nlohmann::json;

constexpr char kAgentE2eToken[] = "agent-e2e-token";
constexpr char kNode[] = "/api/v1/nodes/gpu-0";

class AgentE2eTest : public ::testing::Test {
 protected:
  AgentE2eTest()
      : tls_(kube::MakeTestCertificate(testing::TempDir() + "/agent-e2e-tls")
                 .value()),
        // The agent runs as its service account in deploy/base/rbac.yaml.
        server_({tls_.cert_file,
                 tls_.key_file,
                 "agent-e2e-admin",
                 1,
                 {{kAgentE2eToken,
                   kube::ServiceAccountUser("migserve", "migserve-agent")}}}) {
    EXPECT_TRUE(server_.Start().ok());
    EXPECT_TRUE(
        server_
            .ApplyManifests(
                ReadFile(testing::SourcePath("deploy/base/rbac.yaml")).value(),
                "deploy/base/rbac.yaml")
            .ok());
    server_.Put(kNode, {{"metadata",
                         {{"labels", {{"nvidia.com/mig.capable", "true"}}}}}});
    kubeconfig_ = testing::WriteTempFile(
        "agent-e2e-kubeconfig", server_.KubeconfigYaml("", kAgentE2eToken));
    log_ = testing::TempDir() + "/agent-e2e.log";
  }

  ~AgentE2eTest() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  void StartAgent() {
    // Set before the fork: the child of a threaded process may call only
    // async-signal-safe functions until it execs.
    setenv("MIGSERVE_FAKE_NVML_GPUS", "A100-SXM4-80GB", 1);
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, STDERR_FILENO);
      execl(MIGSERVE_BINARY, "migserve", "agent", "--kubeconfig",
            kubeconfig_.c_str(), "--node", "gpu-0", "--nvml-library",
            MIGSERVE_FAKE_NVML_LIBRARY, static_cast<char*>(nullptr));
      _exit(127);
    }
  }

  // The node's annotation `key` once `done` holds for it (up to a minute).
  std::string WaitForAnnotation(
      const std::string& key,
      const std::function<bool(const std::string&)>& done) {
    for (int i = 0; i < 6000; ++i) {
      std::string text = k8s::Annotation(*server_.Get(kNode), key);
      if (done(text)) return text;
      usleep(10000);
    }
    ADD_FAILURE() << key << " never as wanted; agent log:\n" << Log();
    return "";
  }

  void SetAnnotation(const std::string& key, const std::string& value) {
    server_.Update(kNode, [&](Json* node) {
      (*node)["metadata"]["annotations"][key] = value;
    });
  }

  bool Running() { return waitpid(pid_, nullptr, WNOHANG) == 0; }

  // What the agent said on stderr so far.
  std::string Log() const {
    auto text = ReadFile(log_);
    return text.ok() ? *text : "";
  }

  kube::TestCertificate tls_;
  kube::ApiServerStandIn server_;
  std::string kubeconfig_;
  std::string log_;
  pid_t pid_ = -1;
};

TEST_F(AgentE2eTest, ABadRequestIsAnsweredAndTheAgentKeepsRunning) {
  StartAgent();
  WaitForAnnotation(k8s::kAnnotationLayouts,
                    [](const std::string& text) { return !text.empty(); });
  const std::pair<std::string, std::string> bad[] = {
      {R"({"nonce": 1, "add": []})", ".nonce: missing"},
      {R"({"nonce": "x", "remove": [], "add": [{"profile": "1g.10gb", "start": 4294967300}]})",
       "add[0]: want {profile, start}"},
  };
  for (const auto& [request, error] : bad) {
    SCOPED_TRACE(request);
    SetAnnotation(k8s::RequestKey(0), request);
    std::string status = WaitForAnnotation(
        k8s::StatusKey(0), [&, error = error](const std::string& text) {
          return text.find(error) != std::string::npos;
        });
    auto answer = k8s::ParseStatus(status, "status");
    ASSERT_TRUE(answer.ok()) << status;
    EXPECT_FALSE(answer->ok);
    EXPECT_TRUE(Running()) << Log();
  }
  // A mistyped status does not stop a good request either.
  SetAnnotation(k8s::StatusKey(0), R"({"nonce": 7})");
  const mig::GpuModel& a100 =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  mig::Instance seven{a100.FindProfile("7g.80gb"), 0};
  SetAnnotation(k8s::RequestKey(0),
                k8s::FormatRequest({"good", {{}, {seven}}}, a100));
  std::string status =
      WaitForAnnotation(k8s::StatusKey(0), [](const std::string& text) {
        return text.find("\"good\"") != std::string::npos;
      });
  auto answer = k8s::ParseStatus(status, "status");
  ASSERT_TRUE(answer.ok()) << status;
  EXPECT_TRUE(answer->ok) << answer->error;
  ASSERT_TRUE(Running());
  // What `kubectl describe node gpu-0` shows of it: the refusals and the
  // change, recorded in "default" (an Event about a Node lives there)
  // with the permissions deploy/base/rbac.yaml gives the agent.
  std::multiset<std::string> events;
  for (const Json& e : server_.List("/api/v1/namespaces/default/events")) {
    EXPECT_EQ(e["involvedObject"]["kind"], "Node");
    EXPECT_EQ(e["involvedObject"]["name"], "gpu-0");
    events.insert(e["type"].get<std::string>() + " " +
                  e["reason"].get<std::string>());
  }
  // (The mistyped status may make the agent refuse the second bad request
  // once more before the good one replaces it.)
  EXPECT_EQ(events.count("Normal Repartitioned"), 1u) << Log();
  EXPECT_GE(events.count("Warning RequestRefused"), 2u) << Log();
  EXPECT_EQ(events.size(), events.count("Normal Repartitioned") +
                               events.count("Warning RequestRefused"))
      << Log();
  EXPECT_EQ(Log().find("not recorded"), std::string::npos) << Log();
  kill(pid_, SIGTERM);
  int code = 0;
  waitpid(pid_, &code, 0);
  pid_ = -1;
  EXPECT_TRUE(WIFEXITED(code) && WEXITSTATUS(code) == 0) << Log();
}

// A node whose GPUs NVIDIA's DRA driver partitions (DynamicMIG) is not the
// agent's: it says so and exits before touching NVML. Reading the slices is
// a permission deploy/base/rbac.yaml grants; without it the agent cannot
// tell, and does not run either.
TEST_F(AgentE2eTest, TheAgentDoesNotRunWhereTheDraDriverPartitions) {
  auto exit_code = [&] {
    int code = 0;
    waitpid(pid_, &code, 0);
    pid_ = -1;
    return WIFEXITED(code) ? WEXITSTATUS(code) : -1;
  };
  server_.Put(
      "/apis/resource.k8s.io/v1/resourceslices/gpu-0-gpu.nvidia.com-0",
      {{"metadata", {{"name", "gpu-0-gpu.nvidia.com-0"}}},
       {"spec",
        {{"driver", "gpu.nvidia.com"},
         {"nodeName", "gpu-0"},
         {"devices",
          Json::array(
              {{{"name", "gpu-0-mig-1g10gb-19-0"},
                {"consumesCounters",
                 Json::array({{{"counterSet", "gpu-0-counter-set"}}})}}})}}}});
  StartAgent();
  EXPECT_EQ(exit_code(), 1) << Log();
  EXPECT_NE(Log().find("node gpu-0: NVIDIA's DRA driver partitions its GPUs "
                       "itself (DynamicMIG: ResourceSlice "
                       "gpu-0-gpu.nvidia.com-0"),
            std::string::npos)
      << Log();
  EXPECT_EQ(k8s::Annotation(*server_.Get(kNode), k8s::kAnnotationLayouts), "");

  server_.Update(
      "/apis/rbac.authorization.k8s.io/v1/clusterroles/migserve-agent",
      [](Json* role) {
        Json rules = Json::array();
        for (const Json& rule : (*role)["rules"]) {
          if (rule["resources"][0] != "resourceslices") rules.push_back(rule);
        }
        (*role)["rules"] = rules;
      });
  StartAgent();
  EXPECT_EQ(exit_code(), 1) << Log();
  EXPECT_NE(Log().find("forbidden"), std::string::npos) << Log();
}

}  // namespace
}  // namespace migserve::e2e
