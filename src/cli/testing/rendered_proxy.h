// The proxy as `migserve router --render` writes it, run by the real nginx:
// what the tests that send requests through a rendered proxy share.
#ifndef MIGSERVE_CLI_TESTING_RENDERED_PROXY_H_
#define MIGSERVE_CLI_TESTING_RENDERED_PROXY_H_

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "cli/cli_test_util.h"
#include "proxy/testing/local_nginx.h"
#include "util/test_util.h"

namespace migserve::cli {

// Renders deployment `deployment` over the replica addresses `csv` (router
// --render's list) into `dir`, listening on a free port, and starts nginx
// on it once the render succeeded, waiting until it answers; stops it when
// destroyed.
class RenderedProxy {
 public:
  RenderedProxy(const std::string& deployment, const std::string& csv,
                const std::string& dir)
      : dir_(dir), port_(migserve::testing::FreePort()) {
    rendered_ =
        Cli({"router", "--render", "-d", deployment, "--replicas",
             migserve::testing::WriteTempFile("rendered-replicas.csv", csv),
             "--run-dir", dir, "--listen", fmt::format("127.0.0.1:{}", port_),
             "--grpc-listen",
             fmt::format("127.0.0.1:{}", migserve::testing::FreePort()), "-o",
             dir + "/nginx.conf"});
    if (rendered_.code != 0) return;
    std::string start = proxy::NginxBinary() + " -p " + dir + "/ -c " + dir +
                        "/nginx.conf 2>" + dir + "/start.err &";
    started_ = std::system(start.c_str()) == 0;
    httplib::Client probe("127.0.0.1", port_);
    for (int tries = 0;
         started_ && tries < 200 && !probe.Get("/v2/health/live"); ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
  ~RenderedProxy() {
    if (!started_) return;
    std::string stop = "kill $(cat " + dir_ + "/nginx.pid)";
    EXPECT_EQ(std::system(stop.c_str()), 0);
  }
  RenderedProxy(const RenderedProxy&) = delete;
  RenderedProxy& operator=(const RenderedProxy&) = delete;

  // router --render's exit code and streams.
  const CliResult& rendered() const { return rendered_; }
  bool started() const { return started_; }
  int port() const { return port_; }

 private:
  std::string dir_;
  int port_;
  CliResult rendered_;
  bool started_ = false;
};

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_TESTING_RENDERED_PROXY_H_
