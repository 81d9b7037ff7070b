// The controller's DRA partition driver against NVIDIA's DRA driver and the
// scheduler's first-fit allocation played on the stand-in API server
// (testing/dra_scheduler.h), with a kubelet that runs every pod: a change
// lands exactly on the planned starts through holding claims, the layouts
// read back are the allocated devices, and a claim that first-fit gives
// another device is undone and made again until it lands where planned, or
// fails the change naming both once its attempts are spent.
#include "kubernetes/partition/dra_driver.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "kube/testing/api_server_standin.h"
#include "kube/testing/fake_kubelet.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/dra_objects.h"
#include "kubernetes/names.h"
#include "kubernetes/testing/dra_scheduler.h"
#include "kubernetes/testing/foreign_claim.h"
#include "mig/testing/gpus.h"

namespace migserve::kubernetes {
namespace {

using testing::H100;

mig::Instance At(const char* profile, int start) {
  return {H100().FindProfile(profile), start};
}

class DraDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    kube::KubeConfig config;
    config.server = server_.url();
    client_ = std::make_unique<kube::KubeClient>(config);
    scheduler_ = std::make_unique<DraScheduler>(
        &server_, std::map<std::string, std::pair<const mig::GpuModel*, int>>{
                      {"node-0", {&H100(), 2}}});
    kubelet_ = std::make_unique<kube::FakeKubelet>(&server_, 0.0, nullptr);
    DraDriverOptions options;
    options.namespace_ = "default";
    options.watch_s = 1;
    options.retry_s = 0.01;
    options.held_recheck_s = 0.01;
    options.progress = [this](const std::string& line) {
      std::lock_guard lock(said_mu_);
      said_.push_back(line);
    };
    options.event = [this](EventType type, const std::string& reason,
                           const std::string& message) {
      std::lock_guard lock(said_mu_);
      events_.push_back(fmt::format("{} {}: {}", EventTypeName(type), reason,
                                    message.substr(0, 20)));
    };
    driver_ = std::make_unique<DraDriver>(client_.get(), options);
    ASSERT_TRUE(driver_->Sync().ok());
  }

  // Makes `change` on GPU 0 and follows it to its end; returns how it
  // ended.
  Status Change(const mig::Reconfiguration& change) {
    auto ticket = driver_->Start(gpu_, H100(), change);
    if (!ticket.ok()) return ticket.status();
    for (int tries = 0; tries < 2000; ++tries) {
      if (auto synced = driver_->Sync(); !synced.ok()) return synced.status();
      auto done = driver_->Check(gpu_, *ticket, nlohmann::json::object());
      if (!done.ok()) return done.status();
      if (*done) return **done;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return Status::DeadlineExceeded("the change did not end");
  }

  mig::Layout Layout() {
    EXPECT_TRUE(driver_->Sync().ok());
    auto gpus = driver_->Layouts("node-0", nlohmann::json::object());
    EXPECT_TRUE(gpus.ok()) << gpus.status().ToString();
    EXPECT_EQ(gpus->size(), 2u);
    EXPECT_EQ((*gpus)[0].model, &H100());
    return (*gpus)[0].layout;
  }

  // Someone else's claim (a pod of the user's own, in `namespace_`) for a
  // 1g on GPU 0, which first-fit puts at start 0 behind the controller's
  // back.
  void TheirClaim(const std::string& namespace_ = "default") {
    PutForeignClaim(&server_, namespace_, "theirs", "node-0", 0,
                    H100().profiles[At("1g.10gb", 0).profile]);
  }

  std::vector<std::string> Said() {
    std::lock_guard lock(said_mu_);
    return said_;
  }

  std::mutex said_mu_;
  std::vector<std::string> said_;
  std::vector<std::string> events_;  // "type reason: message's start"
  kube::ApiServerStandIn server_{{}};
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<DraScheduler> scheduler_;
  std::unique_ptr<kube::FakeKubelet> kubelet_;
  std::unique_ptr<DraDriver> driver_;
  const GpuId gpu_{"node-0", 0};
};

TEST_F(DraDriverTest, AChangeLandsOnThePlannedStartsThroughHoldingClaims) {
  auto holds = std::make_shared<std::atomic<int>>(0);  // outlives the body
  server_.AddObserver([holds](const std::string& type, const std::string&,
                              const nlohmann::json& object) {
    if (type == "ADDED" && object.value("kind", "") == "ResourceClaim" &&
        object["metadata"]["labels"].value(kLabelInstance, "") == "hold") {
      ++*holds;
    }
  });
  // First-fit would give the 1g start 4, beside the 3g.
  ASSERT_TRUE(Change({{}, {At("3g.40gb", 0), At("1g.10gb", 6)}}).ok());
  mig::Layout want({At("3g.40gb", 0), At("1g.10gb", 6)});
  EXPECT_EQ(scheduler_->Layout("node-0", 0), want);
  EXPECT_EQ(Layout(), want);
  EXPECT_GT(*holds, 0);
  // The holds are gone; the planned claims and their pods stay.
  EXPECT_EQ(server_
                .List("/apis/resource.k8s.io/v1/namespaces/default/"
                      "resourceclaims")
                .size(),
            2u);
  // A replica shares the instance's claim.
  PodDevice device = driver_->ReplicaDevice({gpu_, &H100(), At("1g.10gb", 6)});
  std::string claim =
      device.pod_fields["resourceClaims"][0]["resourceClaimName"];
  EXPECT_TRUE(
      server_.Get("/apis/resource.k8s.io/v1/namespaces/default/"
                  "resourceclaims/" +
                  claim));
  // Removing the 3g frees its slices for two 2g, at their planned starts.
  ASSERT_TRUE(
      Change({{At("3g.40gb", 0)}, {At("2g.20gb", 0), At("2g.20gb", 2)}}).ok());
  want = mig::Layout({At("2g.20gb", 0), At("2g.20gb", 2), At("1g.10gb", 6)});
  EXPECT_EQ(scheduler_->Layout("node-0", 0), want);
  EXPECT_EQ(Layout(), want);
}

TEST_F(DraDriverTest, AClaimFirstFitKeepsPuttingElsewhereFailsTheChange) {
  // Their claim holds start 0 for good: the planned 1g at 0 lands at 1 at
  // every attempt; each is undone and said, then the change fails naming
  // both devices, and nothing of it stays allocated.
  TheirClaim();
  Status s = Change({{}, {At("1g.10gb", 0)}});
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("got device gpu-0-mig-1g10gb-19-1, planned "
                             "gpu-0-mig-1g10gb-19-0, which claim "
                             "default/theirs holds on GPU node-0/0"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("given up after 4 attempts"), std::string::npos)
      << s.message();
  std::vector<std::string> said = Said();
  ASSERT_EQ(said.size(), 3u);
  {
    // Each undo, and the giving up, as a Warning Event too.
    std::lock_guard lock(said_mu_);
    EXPECT_EQ(events_, std::vector<std::string>(
                           4, "Warning ClaimMisplaced: claim mig-node-0-0-1"));
  }
  EXPECT_NE(said[0].find("undone, trying again in 0.01 s (attempt 2 of 4)"),
            std::string::npos)
      << said[0];
  EXPECT_NE(said[2].find("trying again in 0.04 s (attempt 4 of 4)"),
            std::string::npos)
      << said[2];
  EXPECT_EQ(server_
                .List("/apis/resource.k8s.io/v1/namespaces/default/"
                      "resourceclaims")
                .size(),
            1u);  // theirs
}

// Held by a claim of another namespace: the failure names it there, as
// the Event said at each attempt (issue 91: the holder was never named).
TEST_F(DraDriverTest, TheClaimHoldingThePlannedDeviceIsNamedInAnyNamespace) {
  TheirClaim("team-a");
  Status s = Change({{}, {At("1g.10gb", 0)}});
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("planned gpu-0-mig-1g10gb-19-0, which claim "
                             "team-a/theirs holds on GPU node-0/0 (not "
                             "migserve's"),
            std::string::npos)
      << s.message();
  for (const std::string& line : Said()) {
    EXPECT_NE(line.find("team-a/theirs"), std::string::npos) << line;
  }
}

// Once the attempts are spent, the GPU is left out of the plans while
// their claim holds the planned device (issue 91: every replan picked the
// same device and failed again), and comes back once it is freed.
TEST_F(DraDriverTest, AGpuWhosePlannedDeviceIsHeldIsLeftOutUntilItIsFreed) {
  TheirClaim("team-a");
  Status s = Change({{}, {At("1g.10gb", 0)}});
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("given up after 4 attempts; GPU node-0/0 is left "
                             "out of the plans while claim team-a/theirs "
                             "holds gpu-0-mig-1g10gb-19-0"),
            std::string::npos)
      << s.message();
  auto held = [&] {
    std::vector<std::string> out;
    auto gpus = driver_->Layouts("node-0", nlohmann::json::object());
    EXPECT_TRUE(gpus.ok()) << gpus.status().ToString();
    for (const GpuLayout& g : gpus.value()) out.push_back(g.held_by);
    return out;
  };
  // The node's GPUs are read again at the next look.
  EXPECT_EQ(driver_->Sync().value(), std::set<std::string>{"node-0"});
  EXPECT_EQ(held(), (std::vector<std::string>{"team-a/theirs", ""}));
  ASSERT_TRUE(client_
                  ->Delete("/apis/resource.k8s.io/v1/namespaces/team-a/"
                           "resourceclaims/theirs")
                  .ok());
  // Seen at a look past the recheck's period, which reads the node again.
  bool reread = false;
  for (int tries = 0; tries < 2000 && held()[0] != ""; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    reread = driver_->Sync().value().count("node-0") > 0;
  }
  EXPECT_TRUE(reread);
  EXPECT_EQ(held(), (std::vector<std::string>{"", ""}));
}

// Their claim goes after the first misplaced attempt: the claim made again
// lands on its planned device and the change ends well (issue 72: the
// controller replanned the same device and waited in silence).
TEST_F(DraDriverTest, AClaimPutElsewhereIsUndoneAndLandsWhenRetried) {
  TheirClaim();
  auto undone = std::make_shared<std::atomic<bool>>(false);
  server_.AddObserver([undone](const std::string& type, const std::string& path,
                               const nlohmann::json&) {
    if (type == "DELETED" &&
        path.find("/resourceclaims/mig-") != std::string::npos) {
      *undone = true;
    }
  });
  // Once the controller's claim is undone, theirs goes too.
  std::thread remover([&] {
    for (int tries = 0; tries < 5000 && !*undone; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(client_->Delete("/api/v1/namespaces/default/pods/theirs").ok());
    EXPECT_TRUE(client_
                    ->Delete("/apis/resource.k8s.io/v1/namespaces/default/"
                             "resourceclaims/theirs")
                    .ok());
  });
  Status changed = Change({{}, {At("1g.10gb", 0)}});
  remover.join();
  ASSERT_TRUE(changed.ok()) << changed.ToString();
  EXPECT_EQ(Layout(), mig::Layout({At("1g.10gb", 0)}));
  EXPECT_EQ(Said().size(), 1u);
}

}  // namespace
}  // namespace migserve::kubernetes
