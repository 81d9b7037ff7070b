// The real nginx (Debian's, installed by tools/install-deps.sh) on
// 127.0.0.1 in front of two small HTTP servers.
#include "proxy/nginx_process.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "proxy/testing/emulated_replica.h"
#include "proxy/testing/local_nginx.h"
#include "util/test_util.h"

namespace migserve::proxy {
namespace {

TEST(NginxProcessTest, RotatesByWeightAndReloadsWithoutLosingARequest) {
  EmulatedReplica a;
  EmulatedReplica b;
  int port = testing::FreePort();
  NginxSetup setup;
  setup.listen = "127.0.0.1:" + std::to_string(port);
  setup.prefix = testing::TempDir() + "/nginx";
  ProxyConfig one{
      1,
      {{"s", "m", {{"127.0.0.1", a.port(), 1}, {"127.0.0.1", b.port(), 3}}}}};
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
  ProxyConfig two{2, {{"s", "m", {{"127.0.0.1", a.port(), 1}}}}};
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
  ProxyConfig bad{3, {{"s", "m", {{"no-such-host.invalid", 1, 1}}}}};
  EXPECT_FALSE((*nginx)->Apply(bad).ok());
  auto res = client.Post("/v2/models/m/infer", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(NginxProcessTest, SaysWhyNginxDidNotStart) {
  int port = testing::FreePort();
  NginxSetup setup;
  setup.listen = "127.0.0.1:" + std::to_string(port);
  setup.prefix = testing::TempDir() + "/n";
  auto nginx = NginxProcess::Start("/nonexistent/nginx", setup, {1, {}});
  ASSERT_FALSE(nginx.ok());
  EXPECT_NE(nginx.status().message().find("install-deps"), std::string::npos)
      << nginx.status().message();
}

}  // namespace
}  // namespace migserve::proxy
