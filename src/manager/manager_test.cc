#include "manager/manager.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "cluster/simulated_cluster.h"
#include "controller/journal.h"
#include "controller/reconciler.h"
#include "kube/testing/api_server_standin.h"
#include "manager/health_server.h"
#include "util/test_util.h"

namespace migserve::manager {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kLease[] =
    "/apis/coordination.k8s.io/v1/namespaces/ns/leases/migserve-controller";

TEST(TargetOptionsTest, WantsExactlyOneSource) {
  TargetOptions both;
  both.file = "d.json";
  both.configmap = "map";
  TargetOptions neither;
  TargetOptions file;
  file.file = "d.json";
  EXPECT_EQ(both.Validate().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(neither.Validate().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(file.Validate().ok());
}

// The whole controller in-process, against the stand-in API server, told
// to stop through its token.
class ManagerTest : public ::testing::Test {
 protected:
  ManagerTest() : server_({"", "", "", 1}) {
    EXPECT_TRUE(server_.Start().ok());
    options_.config.server = server_.url();
    options_.target.file = testing::WriteTempFile(
        "manager-target.json",
        R"({"gpu": "A100-SXM4-80GB", "services": [], "gpus": []})");
    options_.journal = testing::TempDir() + "/manager-journal.db";
    std::remove(options_.journal.c_str());
    options_.metrics_port = 0;
    options_.backend.poll_s = 0.01;
    options_.log = [this](const std::string& line) {
      std::lock_guard lock(mu_);
      log_ += line + "\n";
    };
  }

  // Runs the manager on a thread; after 0.3 s makes the target file
  // unreadable, after 0.6 s more stops it. Returns what it returned and how
  // long it took to stop.
  std::pair<Status, double> Run() {
    std::atomic<bool> stop = false;
    Status result = Status::Internal("not run");
    std::thread manager([&] { result = RunManager(options_, stop); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    testing::WriteTempFile("manager-target.json", "not json");
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    Clock::time_point asked = Clock::now();
    stop = true;
    manager.join();
    return {result,
            std::chrono::duration<double>(Clock::now() - asked).count()};
  }

  std::string Log() {
    std::lock_guard lock(mu_);
    return log_;
  }

  kube::ApiServerStandIn server_;
  ManagerOptions options_;
  std::mutex mu_;
  std::string log_;
};

constexpr char kKept[] = "(keeping the previous target)";

TEST_F(ManagerTest, FollowsItsTargetAndStopsOnTheToken) {
  options_.leader_elect = false;
  auto [status, stop_s] = Run();
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_LT(stop_s, 5.0);  // not the 30 s resync
  EXPECT_NE(Log().find(kKept), std::string::npos) << Log();
}

TEST_F(ManagerTest, ACandidateActsOnNothingWhileAnotherHoldsTheLease) {
  kube::KubeClient other_client(options_.config);
  kube::LeaseOptions held;
  held.namespace_ = "ns";
  held.identity = "other";
  held.duration_s = 60;
  held.renew_deadline_s = 30;
  kube::LeaderLease other(&other_client, held);
  ASSERT_TRUE(other.TryAcquireOrRenew().value());
  options_.lease.namespace_ = "ns";
  options_.lease.identity = "me";
  options_.lease.retry_s = 0.05;

  auto [status, stop_s] = Run();
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_LT(stop_s, 5.0);
  EXPECT_NE(Log().find("held by other"), std::string::npos) << Log();
  EXPECT_EQ(Log().find(kKept), std::string::npos) << Log();
  EXPECT_EQ((*server_.Get(kLease))["spec"]["holderIdentity"], "other");
}

TEST_F(ManagerTest, OnceReturnsTheReconcilesError) {
  options_.leader_elect = false;
  options_.once = true;
  options_.target.file = testing::SourcePath("data/deployments/day.json");
  std::atomic<bool> stop = false;
  Status status = RunManager(options_, stop);  // a cluster with no GPUs
  EXPECT_FALSE(status.ok());
  EXPECT_NE(Log().find("controller: " + status.message()), std::string::npos)
      << Log();
}

TEST(HealthServerTest, AnswersFromTheReconciler) {
  cluster::SimulatedCluster cluster(cluster::ClusterState{});
  std::string path = testing::TempDir() + "/health-journal.db";
  std::remove(path.c_str());
  auto journal = controller::Journal::Open(path).value();
  controller::Reconciler reconciler(&cluster, journal.get());
  HealthServer server(&reconciler);
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  httplib::Client client("127.0.0.1", server.port());
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("migserve_reconciles_total"), std::string::npos);
  auto progress = client.Get("/progress");
  ASSERT_TRUE(progress);
  EXPECT_NE(progress->body.find("\"state\""), std::string::npos);
}

}  // namespace
}  // namespace migserve::manager
