#include "util/status_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>

namespace migserve {
namespace {

// A page from its callback, each time; /healthz 200 or 503 with the
// message; an address it cannot listen on is named.
TEST(StatusServerTest, ServesItsPagesAndItsHealth) {
  std::atomic<int> calls = 0;
  std::atomic<bool> healthy = true;
  StatusServer server;
  server.Page("/metrics", "text/plain; version=0.0.4",
              [&] { return "calls " + std::to_string(++calls) + "\n"; });
  server.Health([&] {
    return healthy ? Status::Ok()
                   : Status::Unavailable("the last round failed");
  });
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  ASSERT_GT(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  auto page = client.Get("/metrics");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->body, "calls 1\n");
  EXPECT_EQ(page->get_header_value("Content-Type"),
            "text/plain; version=0.0.4");
  EXPECT_EQ(client.Get("/metrics")->body, "calls 2\n");
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  healthy = false;
  health = client.Get("/healthz");
  EXPECT_EQ(health->status, 503);
  EXPECT_EQ(health->body, "the last round failed\n");
  EXPECT_EQ(client.Get("/nothing")->status, 404);

  // An address it cannot listen on is named.
  StatusServer nowhere;
  EXPECT_EQ(nowhere.Start("256.1.1.1", 0).message(),
            "cannot listen on 256.1.1.1:0");
}

}  // namespace
}  // namespace migserve
