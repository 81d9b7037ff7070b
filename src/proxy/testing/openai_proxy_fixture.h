// What the OpenAI proxy tests share: the real nginx on a free port of
// 127.0.0.1 with one worker (each test starts it on its config), and a
// language model's upstream.
#ifndef MIGSERVE_PROXY_TESTING_OPENAI_PROXY_FIXTURE_H_
#define MIGSERVE_PROXY_TESTING_OPENAI_PROXY_FIXTURE_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "proxy/nginx_config.h"
#include "proxy/proxy_config.h"
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

  int port_ = 0;
  NginxSetup setup_;
};

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_OPENAI_PROXY_FIXTURE_H_
