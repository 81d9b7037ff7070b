// What the OpenAI proxy tests share: the real nginx on a free port of
// 127.0.0.1 with one worker, started on each test's config, and a
// language model's upstream.
#ifndef MIGSERVE_PROXY_TESTING_OPENAI_PROXY_FIXTURE_H_
#define MIGSERVE_PROXY_TESTING_OPENAI_PROXY_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "proxy/nginx_config.h"
#include "proxy/nginx_process.h"
#include "proxy/proxy_config.h"
#include "proxy/testing/local_nginx.h"
#include "proxy/testing/proxy_values.h"
#include "util/test_util.h"

namespace migserve::proxy {

class OpenAiProxyFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreePort();
    setup_.listen = Local(port_);
    setup_.prefix =
        RunDir(testing::TempDir() + "/nginx-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    setup_.worker_processes = 1;
  }
  // An OpenAI service's upstream, its replicas answering to `aliases` too.
  static ProxyUpstream Llm(const std::string& service, const std::string& model,
                           std::vector<ProxyBackend> backends,
                           const std::vector<std::string>& aliases = {}) {
    ProxyUpstream u = Upstream(service, model, std::move(backends), true);
    for (const std::string& a : aliases) {
      u.aliases.push_back(*ServedName::Parse(a));
    }
    return u;
  }

  // nginx on `config`, once it serves the config's generation; null (the
  // test failed, saying why) if it does not.
  std::unique_ptr<NginxProcess> StartNginx(const ProxyConfig& config) {
    auto nginx = NginxProcess::Start(NginxBinary(), setup_, config);
    if (!nginx.ok()) {
      ADD_FAILURE() << nginx.status().ToString();
      return nullptr;
    }
    Status serving =
        WaitForGeneration("127.0.0.1", port_, config.generation, 10);
    if (!serving.ok()) {
      ADD_FAILURE() << serving.ToString();
      return nullptr;
    }
    return std::move(*nginx);
  }

  int port_ = 0;
  NginxSetup setup_;
};

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_OPENAI_PROXY_FIXTURE_H_
