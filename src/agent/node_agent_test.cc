#include "agent/node_agent.h"

#include <gtest/gtest.h>

#include <thread>

#include "agent/testing/fake_nvml.h"
#include "kube/testing/api_server_standin.h"
#include "kubernetes/names.h"
#include "mig/testing/gpus.h"

namespace migserve::agent {
namespace {

using kube::ApiServerStandIn;
using kube::KubeClient;
using Json = nlohmann::json;

using testing::A100;
using testing::A100Instance;

constexpr char kNode[] = "/api/v1/nodes/node-a";
constexpr char kPlugin[] =
    "/api/v1/namespaces/gpu-operator/pods/nvidia-device-plugin-x";

class NodeAgentTest : public ::testing::Test {
 protected:
  NodeAgentTest()
      : server_({}),
        nvml_({&A100(), &A100()}),
        driver_(MigDriver::Open(&nvml_, mig::GpuCatalog::Default()).value()) {
    EXPECT_TRUE(server_.Start().ok());
    kube::KubeConfig config;
    config.server = server_.url();
    client_ = std::make_unique<kube::KubeClient>(config,
                                                 kube::RetryPolicy{3, 0.01, 5});
    server_.Put(kNode, {{"metadata",
                         {{"labels", {{"nvidia.com/mig.capable", "true"}}}}}});
    PutDevicePlugin();
    NodeAgentOptions options;
    options.node = "node-a";
    options.watch_s = 1;
    agent_ = std::make_unique<NodeAgent>(client_.get(), driver_.get(), options);
  }

  void PutDevicePlugin() {
    server_.Put(kPlugin,
                {{"metadata",
                  {{"labels", {{"app", "nvidia-device-plugin-daemonset"}}}}},
                 {"spec", {{"nodeName", "node-a"}}}});
  }

  void Request(int index, const std::string& nonce,
               const mig::Reconfiguration& change, long epoch = 0) {
    server_.Update(kNode, [&](Json* node) {
      (*node)["metadata"]["annotations"][kubernetes::RequestKey(index)] =
          kubernetes::FormatRequest({nonce, change, epoch}, A100());
    });
  }

  std::optional<kubernetes::MigStatus> Answer(int index) {
    std::string text = kubernetes::Annotation(*server_.Get(kNode),
                                              kubernetes::StatusKey(index));
    if (text.empty()) return std::nullopt;
    return kubernetes::ParseStatus(text, "test").value();
  }

  std::vector<mig::Layout> Reported() {
    std::string text = kubernetes::Annotation(*server_.Get(kNode),
                                              kubernetes::kAnnotationLayouts);
    kubernetes::NodeLayouts parsed =
        kubernetes::ParseLayouts(text, "test").value();
    std::vector<mig::Layout> layouts;
    for (const kubernetes::GpuLayout& g : parsed.gpus) {
      layouts.push_back(g.layout);
    }
    return layouts;
  }

  kube::ApiServerStandIn server_;
  FakeNvml nvml_;
  std::unique_ptr<MigDriver> driver_;
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<NodeAgent> agent_;
};

TEST_F(NodeAgentTest, ReportsEveryGpusLayout) {
  ASSERT_TRUE(driver_->Apply(1, {{}, {A100Instance("7g.80gb", 0)}}).ok());
  ASSERT_TRUE(agent_->Report().ok());
  EXPECT_EQ(Reported(),
            (std::vector<mig::Layout>{
                mig::Layout(), mig::Layout({A100Instance("7g.80gb", 0)})}));
}

TEST_F(NodeAgentTest, CarriesOutARequestOnceAndRestartsTheDevicePlugin) {
  Request(1, "n1",
          {{}, {A100Instance("3g.40gb", 0), A100Instance("3g.40gb", 4)}});
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  auto answer = Answer(1);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->nonce, "n1");
  EXPECT_TRUE(answer->ok) << answer->error;
  mig::Layout want({A100Instance("3g.40gb", 0), A100Instance("3g.40gb", 4)});
  EXPECT_EQ(nvml_.Layout(1), want);
  EXPECT_EQ(Reported()[1], want);
  EXPECT_FALSE(server_.Get(kPlugin).has_value());
  // Answered requests are not carried out again.
  PutDevicePlugin();
  int changes = nvml_.changes();
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  EXPECT_EQ(nvml_.changes(), changes);
  EXPECT_TRUE(server_.Get(kPlugin).has_value());
  // The same change under a new nonce (a restarted controller) is already
  // done: answered ok without touching the GPU.
  Request(1, "n2",
          {{}, {A100Instance("3g.40gb", 0), A100Instance("3g.40gb", 4)}});
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  EXPECT_EQ(Answer(1)->nonce, "n2");
  EXPECT_TRUE(Answer(1)->ok);
  EXPECT_EQ(nvml_.changes(), changes);
}

TEST_F(NodeAgentTest, ReportsAnInstanceInUseInsteadOfForcingIt) {
  ASSERT_TRUE(driver_->Apply(0, {{}, {A100Instance("7g.80gb", 0)}}).ok());
  nvml_.SetInUse(0, A100Instance("7g.80gb", 0), true);
  Request(0, "n1",
          {{A100Instance("7g.80gb", 0)}, {A100Instance("4g.40gb", 0)}});
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  auto answer = Answer(0);
  ASSERT_TRUE(answer.has_value());
  EXPECT_FALSE(answer->ok);
  EXPECT_NE(answer->error.find("in use"), std::string::npos) << answer->error;
  EXPECT_EQ(nvml_.Layout(0), mig::Layout({A100Instance("7g.80gb", 0)}));
  EXPECT_TRUE(server_.Get(kPlugin).has_value());
}

// Requests no controller of ours writes (a nonce that is not a string, a
// start past the GPU's slices, not an object at all) are refused with a
// status naming the field, once, and never touch the GPU; a status whose
// nonce is mistyped does not stop a good request.
TEST_F(NodeAgentTest, RefusesABadRequestOnceWithAStatusInsteadOfDying) {
  const std::pair<std::string, std::string> cases[] = {
      {R"({"nonce": 1, "add": []})", ".nonce: missing"},
      {R"({"nonce": null})", ".nonce: missing"},
      {R"({"nonce": {"a": 1}})", ".nonce: missing"},
      {"null", "not a JSON object"},
      {"{", "not a JSON object"},
      {R"({"nonce": "x", "remove": [], "add": [{"profile": "1g.10gb", "start": 4294967300}]})",
       "add[0]: want {profile, start}"},
      {R"({"nonce": "x", "remove": [], "add": [{"profile": "1g.10gb", "start": 9}]})",
       "add[0].start: 9 is not a slice of A100-SXM4-80GB (0 to 7)"},
  };
  for (const auto& [request, error] : cases) {
    SCOPED_TRACE(request);
    server_.Update(kNode, [&, &request = request](Json* node) {
      (*node)["metadata"]["annotations"][kubernetes::RequestKey(0)] = request;
    });
    ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
    auto answer = Answer(0);
    ASSERT_TRUE(answer.has_value());
    EXPECT_FALSE(answer->ok);
    EXPECT_NE(answer->error.find(error), std::string::npos) << answer->error;
    EXPECT_EQ(nvml_.changes(), 0);
    // Answered: handling the node again writes nothing.
    std::string version = (*server_.Get(kNode))["metadata"]["resourceVersion"];
    ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
    EXPECT_EQ((*server_.Get(kNode))["metadata"]["resourceVersion"], version);
  }
  server_.Update(kNode, [&](Json* node) {
    (*node)["metadata"]["annotations"][kubernetes::StatusKey(0)] =
        R"({"nonce": 7})";
  });
  Request(0, "n1", {{}, {A100Instance("7g.80gb", 0)}});
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  EXPECT_TRUE(Answer(0)->ok) << Answer(0)->error;
  EXPECT_EQ(nvml_.Layout(0), mig::Layout({A100Instance("7g.80gb", 0)}));
}

// Requests carry their leader's Lease epoch (issue 91): once the node shows
// a newer leader's request (here on another GPU) or the agent has carried
// one out, an older leader's is refused, named, and never touches the GPU;
// the newer leader's go on, and a request without an epoch (no leader
// election) is not judged.
TEST_F(NodeAgentTest, RefusesARequestOfAReplacedLeader) {
  Request(0, "old-1", {{}, {A100Instance("7g.80gb", 0)}}, 3);
  Request(1, "new-1", {{}, {A100Instance("7g.80gb", 0)}}, 4);
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  ASSERT_TRUE(Answer(0).has_value());
  EXPECT_FALSE(Answer(0)->ok);
  EXPECT_EQ(Answer(0)->error,
            "GPU 0: request old-1 is of lease epoch 3, older than epoch 4 on "
            "this node: a replaced controller's; not carried out");
  EXPECT_TRUE(nvml_.Layout(0).empty());
  EXPECT_TRUE(Answer(1)->ok) << Answer(1)->error;
  EXPECT_EQ(Answer(1)->epoch, 4);
  // The newer leader's request is gone from the node; the agent remembers
  // what it carried out.
  Request(1, "old-2", {{}, {}}, 3);
  Request(0, "old-3", {{}, {A100Instance("7g.80gb", 0)}}, 3);
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  EXPECT_FALSE(Answer(0)->ok);
  EXPECT_FALSE(Answer(1)->ok);
  EXPECT_TRUE(nvml_.Layout(0).empty());
  Request(0, "new-2", {{}, {A100Instance("7g.80gb", 0)}}, 5);
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  EXPECT_TRUE(Answer(0)->ok) << Answer(0)->error;
  EXPECT_EQ(nvml_.Layout(0), mig::Layout({A100Instance("7g.80gb", 0)}));
  Request(0, "unfenced", {{A100Instance("7g.80gb", 0)}, {}});
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  EXPECT_TRUE(Answer(0)->ok) << Answer(0)->error;
  // A malformed epoch is refused naming it.
  server_.Update(kNode, [&](Json* node) {
    (*node)["metadata"]["annotations"][kubernetes::RequestKey(0)] =
        R"({"nonce": "x", "epoch": -1})";
  });
  ASSERT_TRUE(agent_->Handle(*server_.Get(kNode)).ok());
  EXPECT_NE(Answer(0)->error.find(".epoch: want a non-negative integer"),
            std::string::npos)
      << Answer(0)->error;
}

TEST_F(NodeAgentTest, RunAnswersRequestsAsTheNodeChanges) {
  std::atomic<bool> stop = false;
  std::thread runner([&] { EXPECT_TRUE(agent_->Run(stop).ok()); });
  for (int i = 0;
       i < 500 && server_.Get(kNode)->dump().find(
                      kubernetes::kAnnotationLayouts) == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Request(0, "w1", {{}, {A100Instance("2g.20gb", 2)}});
  for (int i = 0; i < 500 && !Answer(0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop = true;
  runner.join();
  ASSERT_TRUE(Answer(0).has_value());
  EXPECT_TRUE(Answer(0)->ok);
  EXPECT_EQ(nvml_.Layout(0), mig::Layout({A100Instance("2g.20gb", 2)}));
}

}  // namespace
}  // namespace migserve::agent
