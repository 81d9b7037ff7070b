// The real nginx (Debian's, installed by tools/install-deps.sh) on
// 127.0.0.1 in front of small HTTP and gRPC servers.
#include "proxy/nginx_process.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "proxy/testing/emulated_replica.h"
#include "proxy/testing/grpc_replicas.h"
#include "proxy/testing/kept_alive.h"
#include "proxy/testing/local_nginx.h"
#include "proxy/testing/proxy_values.h"
#include "util/test_util.h"

namespace migserve::proxy {
namespace {

TEST(NginxProcessTest, RotatesByWeightAndReloadsWithoutLosingARequest) {
  EmulatedReplica a;
  EmulatedReplica b;
  int port = testing::FreePort();
  NginxSetup setup;
  setup.listen = Local(port);
  setup.prefix = RunDir(testing::TempDir() + "/nginx");
  ProxyConfig one{1,
                  {Upstream("s", "m",
                            {Backend("127.0.0.1", a.port(), 1),
                             Backend("127.0.0.1", b.port(), 3)})}};
  auto nginx = NginxProcess::Start(NginxBinary(), setup, one);
  ASSERT_TRUE(nginx.ok()) << nginx.status().ToString();
  ASSERT_TRUE(WaitForGeneration("127.0.0.1", port, 1, 10).ok());

  httplib::Client client("127.0.0.1", port);
  client.set_tcp_nodelay(true);
  for (int i = 0; i < 400; ++i) {
    auto res = client.Post("/v2/models/m/infer", "{}", "application/json");
    ASSERT_TRUE(res && res->status == 200) << i;
  }
  // Smooth weighted round robin: exactly a quarter and three quarters.
  EXPECT_EQ(a.hits(), 100);
  EXPECT_EQ(b.hits(), 300);

  // Requests keep flowing while b is taken out: none fails, and once the
  // proxy serves generation 2, none reaches b.
  std::atomic<bool> stop{false};
  std::atomic<int> failed{0};
  std::atomic<int> sent{0};
  std::thread load([&] {
    httplib::Client c("127.0.0.1", port);
    c.set_tcp_nodelay(true);
    while (!stop) {
      auto res = c.Post("/v2/models/m/infer", "{}", "application/json");
      if (!res || res->status != 200) ++failed;
      ++sent;
    }
  });
  while (sent < 50) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ProxyConfig two{2, {Upstream("s", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  ASSERT_TRUE((*nginx)->Apply(two).ok());
  ASSERT_TRUE(WaitForGeneration("127.0.0.1", port, 2, 10).ok());
  // The old workers finish what they hold; then b gets nothing more.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int b_after = b.hits();
  int sent_after = sent;
  while (sent < sent_after + 200) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  stop = true;
  load.join();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(b.hits(), b_after);

  // A configuration nginx refuses leaves the live one in place.
  ProxyConfig bad{
      3, {Upstream("s", "m", {Backend("no-such-host.invalid", 1, 1)})}};
  Status refused = (*nginx)->Apply(bad);
  EXPECT_FALSE(refused.ok());
  // With nginx's reason, on the message's one line (issue 92: it ended at
  // "refused generation 3:", the reason on the lines after).
  EXPECT_NE(refused.message().find("host not found in upstream "
                                   "\"no-such-host.invalid:1\""),
            std::string::npos)
      << refused.message();
  EXPECT_EQ(refused.message().find('\n'), std::string::npos)
      << refused.message();
  EXPECT_EQ(refused.message().rfind("nginx -t refused generation 3: ", 0), 0u)
      << refused.message();
  auto res = client.Post("/v2/models/m/infer", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// Two services of one model and a third of another: each request reaches
// its own service's replica, over HTTP (inference, model metadata, model
// ready) and gRPC; the proxy answers its own health and says why it cannot
// route a request.
TEST(NginxProcessTest, RoutesEachServiceToItsOwnReplicasOverHttpAndGrpc) {
  auto serving = [](const std::string& service, const std::string& model) {
    EmulatedReplicaOptions options;
    options.threads = 4;
    options.service = service;
    options.model = model;
    return options;
  };
  EmulatedReplica bert1(serving("bert-1", "bert"));
  EmulatedReplica bert2(serving("bert-2", "bert"));
  EmulatedReplica resnet(serving("r", "resnet.50"));
  GrpcReplicas grpc({"bert-1", "bert-2"});
  ASSERT_GT(grpc.port("bert-2"), 0) << "python3-grpcio: tools/install-deps.sh";
  int port = testing::FreePort();
  int grpc_port = testing::FreePort();
  NginxSetup setup;
  setup.listen = Local(port);
  setup.grpc_listen = Local(grpc_port);
  setup.prefix = RunDir(testing::TempDir() + "/nginx-routes");
  ProxyConfig config{
      1,
      {Upstream("bert-1", "bert",
                {Backend("127.0.0.1", bert1.port(), 1, grpc.port("bert-1"))}),
       Upstream("bert-2", "bert",
                {Backend("127.0.0.1", bert2.port(), 1, grpc.port("bert-2"))}),
       Upstream("r", "resnet.50", {Backend("127.0.0.1", resnet.port(), 1)}),
       Upstream("idle", "vgg", {})}};
  auto nginx = NginxProcess::Start(NginxBinary(), setup, config);
  ASSERT_TRUE(nginx.ok()) << nginx.status().ToString();
  ASSERT_TRUE(WaitForGeneration("127.0.0.1", port, 1, 10).ok());

  httplib::Client client("127.0.0.1", port);
  auto post = [&](const std::string& service, const std::string& model) {
    httplib::Headers headers;
    if (!service.empty()) headers.emplace("migserve-service", service);
    auto res = client.Post("/v2/models/" + model + "/infer", headers, "{}",
                           "application/json");
    return res ? res->status : -1;
  };
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(post("bert-1", "bert"), 200);
    EXPECT_EQ(post("bert-2", "bert"), 200);
    EXPECT_EQ(post("bert-2", "bert"), 200);
    EXPECT_EQ(post("", "resnet.50"), 200);  // the model's only service
  }
  EXPECT_EQ(bert1.hits(), 10);
  EXPECT_EQ(bert2.hits(), 20);
  EXPECT_EQ(resnet.hits(), 10);
  // Model metadata and readiness pass through, without a redirect.
  httplib::Headers bert2_header = {{"migserve-service", "bert-2"}};
  auto meta = client.Get("/v2/models/bert", bert2_header);
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->status, 200);
  EXPECT_EQ(meta->body, "{\"name\":\"bert\"}\n");
  EXPECT_EQ(client.Get("/v2/models/resnet.50")->status, 200);
  EXPECT_EQ(bert1.misrouted() + bert2.misrouted() + resnet.misrouted(), 0);

  // What cannot be routed is answered with the reason.
  EXPECT_EQ(post("", "bert"), 400);
  auto ambiguous = client.Post("/v2/models/bert/infer", "{}", "text/plain");
  EXPECT_NE(ambiguous->body.find("name one in the header migserve-service"),
            std::string::npos);
  EXPECT_EQ(post("no-such", "bert"), 404);
  EXPECT_EQ(post("", "resnetx50"), 404);  // '.' is not a wildcard
  EXPECT_EQ(post("idle", "vgg"), 503);
  EXPECT_EQ(post("", "vgg"), 503);
  EXPECT_EQ(client.Get("/v2/health/ready")->status, 200);
  EXPECT_EQ(client.Get("/v2/health/live")->status, 200);
  EXPECT_EQ(client.Get("/v2/repository/index")->status, 404);

  // gRPC: by header only (its path names the method, not the model).
  EXPECT_EQ(GrpcCall(grpc_port, "bert-1"), "OK bert-1 bert-1");
  EXPECT_EQ(GrpcCall(grpc_port, "bert-2"), "OK bert-2 bert-2");
  EXPECT_EQ(GrpcCall(grpc_port, ""),
            "INVALID_ARGUMENT name the service in the header "
            "migserve-service");
  EXPECT_EQ(GrpcCall(grpc_port, "no-such"),
            "NOT_FOUND no such service (header migserve-service)");
  EXPECT_EQ(GrpcCall(grpc_port, "r"), "UNAVAILABLE the service has no replica");
}

// The processes whose parent is `parent`.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat) || stat.rfind(')') == std::string::npos) {
      continue;
    }
    char state = 0;
    long ppid = 0;
    if (std::sscanf(stat.c_str() + stat.rfind(')') + 1, " %c %ld", &state,
                    &ppid) == 2 &&
        ppid == parent && state != 'Z') {
      out.push_back(std::atoi(stat.c_str()));
    }
  }
  return out;
}

bool Running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  return std::getline(in, stat) && stat.substr(stat.rfind(')') + 2, 1) != "Z";
}

// Another server holds the port: nginx gives up after its retries, and the
// start fails saying so instead of taking the other server's answers for
// its own.
TEST(NginxProcessTest, AStartOnATakenPortFails) {
  EmulatedReplica squatter;
  NginxSetup setup;
  setup.listen = Local(squatter.port());
  setup.prefix = RunDir(testing::TempDir() + "/nginx-taken");
  auto nginx = NginxProcess::Start(NginxBinary(), setup, {1, {}});
  ASSERT_FALSE(nginx.ok());
  EXPECT_NE(nginx.status().message().find("Address already in use"),
            std::string::npos)
      << nginx.status().message();
}

// The master killed: its workers live on with the old routes, holding the
// port. Supervise kills them and starts nginx again on the live routes.
TEST(NginxProcessTest, SuperviseRestartsAKilledMasterAndKillsItsOrphans) {
  EmulatedReplica a;
  int port = testing::FreePort();
  NginxSetup setup;
  setup.listen = Local(port);
  setup.prefix = RunDir(testing::TempDir() + "/nginx-killed");
  setup.worker_processes = 2;
  ProxyConfig config{4,
                     {Upstream("s", "m", {Backend("127.0.0.1", a.port(), 1)})}};
  auto nginx = NginxProcess::Start(NginxBinary(), setup, config);
  ASSERT_TRUE(nginx.ok()) << nginx.status().ToString();
  std::vector<std::string> log;
  auto sink = [&](const std::string& line) { log.push_back(line); };
  EXPECT_TRUE((*nginx)->Supervise(sink).ok());
  EXPECT_TRUE(log.empty());

  pid_t master = (*nginx)->pid();
  std::vector<pid_t> workers = ChildrenOf(master);
  ASSERT_EQ(workers.size(), 2u);
  kill(master, SIGKILL);
  while (Running(master)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(Running(workers[0]));  // orphaned, still serving

  ASSERT_TRUE((*nginx)->Supervise(sink).ok());
  ASSERT_EQ(log.size(), 2u);
  EXPECT_NE(log[0].find(fmt::format("nginx (pid {}) exited", master)),
            std::string::npos)
      << log[0];
  EXPECT_NE(log[1].find("nginx restarted"), std::string::npos) << log[1];
  EXPECT_NE((*nginx)->pid(), master);
  for (pid_t w : workers) EXPECT_FALSE(Running(w)) << w;
  EXPECT_TRUE(WaitForGeneration("127.0.0.1", port, 4, 10).ok());
  httplib::Client client("127.0.0.1", port);
  auto res = client.Post("/v2/models/m/infer", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE((*nginx)->Supervise(sink).ok());
  EXPECT_EQ(log.size(), 2u);
}

TEST(NginxProcessTest, SaysWhyNginxDidNotStart) {
  int port = testing::FreePort();
  NginxSetup setup;
  setup.listen = Local(port);
  setup.prefix = RunDir(testing::TempDir() + "/n");
  auto nginx = NginxProcess::Start("/nonexistent/nginx", setup, {1, {}});
  ASSERT_FALSE(nginx.ok());
  EXPECT_NE(nginx.status().message().find("install-deps"), std::string::npos)
      << nginx.status().message();
}

// The keep-alive loss at reloads, measured (issue 76; docs/serving.md,
// "Reloads and keep-alive"): clients on kept-alive connections through 20
// reloads under load. A reload closes a connection idle between two
// requests, and a request written at that instant gets no response; a
// client that sends such a request once more loses none, which is what
// the test asserts. What clients that never retry lose is said (the
// figure in the docs), not asserted: it is a race with the reload.
TEST(NginxProcessTest, KeepAliveClientsThatRetryLoseNothingThroughReloads) {
  EmulatedReplica a;
  EmulatedReplica b;
  int port = testing::FreePort();
  NginxSetup setup;
  setup.listen = Local(port);
  setup.prefix = RunDir(testing::TempDir() + "/nginx-keepalive");
  auto config = [&](long generation) {
    long heavy = generation % 2 == 0 ? 3 : 1;
    return ProxyConfig{generation,
                       {Upstream("s", "m",
                                 {Backend("127.0.0.1", a.port(), heavy),
                                  Backend("127.0.0.1", b.port(), 4 - heavy)})}};
  };
  auto nginx = NginxProcess::Start(NginxBinary(), setup, config(1));
  ASSERT_TRUE(nginx.ok()) << nginx.status().ToString();
  ASSERT_TRUE(WaitForGeneration("127.0.0.1", port, 1, 10).ok());
  std::atomic<bool> stop{false};
  // Per kind of client (0: never retries, 1: retries once): requests sent,
  // requests without a response on the first try, and requests failed.
  std::atomic<int> sent[2] = {0, 0};
  std::atomic<int> closed[2] = {0, 0};
  std::atomic<int> failed[2] = {0, 0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i) {
    const int retries = i % 2;
    const auto think = std::chrono::microseconds(200 * (i + 1));
    clients.emplace_back([&, retries, think] {
      httplib::Client client("127.0.0.1", port);
      client.set_tcp_nodelay(true);
      client.set_keep_alive(true);
      while (!stop) {
        if (!InferKeptAlive(&client, retries > 0, &closed[retries])) {
          ++failed[retries];
        }
        ++sent[retries];
        // Some think time, so that connections sit idle at reloads.
        std::this_thread::sleep_for(think);
      }
    });
  }
  // The clients stop before any assertion ends the test.
  Status reloaded = Status::Ok();
  for (long generation = 2; generation <= 21 && reloaded.ok(); ++generation) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    reloaded = (*nginx)->ApplyAndDrain(config(generation));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  stop = true;
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(reloaded.ok()) << reloaded.ToString();
  EXPECT_EQ(failed[1], 0) << sent[1] << " sent";
  EXPECT_GT(sent[0], 0);
  std::string figure = fmt::format(
      "20 reloads: clients that never retry lost {} of {} requests; clients "
      "that retry once had {} of {} closed and lost {}",
      failed[0].load(), sent[0].load(), closed[1].load(), sent[1].load(),
      failed[1].load());
  std::printf("%s\n", figure.c_str());
  ::testing::Test::RecordProperty("keepalive_loss", figure);
}

}  // namespace
}  // namespace migserve::proxy
