#include "kube/kube_client.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <thread>

#include "kube/testing/api_server_standin.h"
#include "kube/testing/test_certificate.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::kube {
namespace {

using Json = nlohmann::json;

constexpr char kToken[] = "s3cret-t0ken";

const TestCertificate& Certificate() {
  static TestCertificate c =
      MakeTestCertificate(testing::TempDir() + "/tls").value();
  return c;
}

class KubeClientTest : public ::testing::Test {
 protected:
  KubeClientTest()
      : server_({Certificate().cert_file, Certificate().key_file, kToken, 2}) {
    EXPECT_TRUE(server_.Start().ok());
  }

  KubeConfig Config() const {
    KubeConfig config;
    config.server = server_.url();
    config.ca_pem = Certificate().cert_pem;
    config.token = kToken;
    return config;
  }

  KubeClient Client(KubeConfig config) const {
    return KubeClient(std::move(config), {3, 0.01, 10});
  }

  static Json Pod(const std::string& name, const std::string& service) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name}, {"labels", {{"migserve.io/service", service}}}}},
            {"spec", {{"nodeName", "node-0"}}}};
  }

  ApiServerStandIn server_;
};

constexpr char kPods[] = "/api/v1/namespaces/ns/pods";

TEST_F(KubeClientTest, CreatesGetsListsPatchesAndDeletesOverTls) {
  KubeClient client = Client(Config());
  auto made = client.Create(kPods, Pod("a", "bert"));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ((*made)["metadata"]["namespace"], "ns");
  ASSERT_TRUE(client.Create(kPods, Pod("b", "resnet")).ok());
  auto got = client.Get(std::string(kPods) + "/a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["metadata"]["labels"]["migserve.io/service"], "bert");
  auto list = client.List(
      kPods, "labelSelector=" + KubeClient::Escape("migserve.io/service=bert"));
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["items"].size(), 1u);
  EXPECT_EQ((*list)["items"][0]["metadata"]["name"], "a");
  auto all = client.List(
      "/api/v1/pods",
      "fieldSelector=" + KubeClient::Escape("spec.nodeName=node-0"));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)["items"].size(), 2u);
  auto patched = client.Patch(std::string(kPods) + "/a",
                              {{"metadata", {{"annotations", {{"x", "1"}}}}}});
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ((*patched)["metadata"]["annotations"]["x"], "1");
  EXPECT_EQ((*patched)["metadata"]["labels"]["migserve.io/service"], "bert");
  EXPECT_TRUE(client.Delete(std::string(kPods) + "/a").ok());
  EXPECT_EQ(client.Get(std::string(kPods) + "/a").status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(client.Delete(std::string(kPods) + "/a").code(),
            Status::Code::kNotFound);
}

// A fenced client (a leader that cannot prove it holds its Lease) sends no
// write, retries included, and says why; reads go on.
TEST_F(KubeClientTest, AFenceRefusesEveryWriteAndNoRead) {
  KubeClient client = Client(Config());
  ASSERT_TRUE(client.Create(kPods, Pod("a", "bert")).ok());
  bool fenced = false;
  client.SetFence([&] {
    return fenced ? Status::FailedPrecondition("fenced: not the leader")
                  : Status::Ok();
  });
  ASSERT_TRUE(client.Create(kPods, Pod("b", "bert")).ok());
  fenced = true;
  long writes = client.writes();
  Status made = client.Create(kPods, Pod("c", "bert")).status();
  EXPECT_EQ(made.code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(made.message(),
            "POST /api/v1/namespaces/ns/pods: fenced: not the leader");
  EXPECT_FALSE(client.Patch(std::string(kPods) + "/a", {{"x", 1}}).ok());
  EXPECT_FALSE(client.Delete(std::string(kPods) + "/a").ok());
  EXPECT_EQ(client.writes(), writes);
  EXPECT_TRUE(server_.Get(std::string(kPods) + "/a").has_value());
  EXPECT_FALSE(server_.Get(std::string(kPods) + "/c").has_value());
  EXPECT_TRUE(client.Get(std::string(kPods) + "/a").ok());
  EXPECT_EQ((*client.List(kPods))["items"].size(), 2u);
}

TEST_F(KubeClientTest, ConflictsAreAborted) {
  KubeClient client = Client(Config());
  auto first = client.Create(kPods, Pod("a", "bert"));
  ASSERT_TRUE(first.ok());
  Status again = client.Create(kPods, Pod("a", "bert")).status();
  EXPECT_EQ(again.code(), Status::Code::kAborted);
  EXPECT_NE(again.message().find("already exists"), std::string::npos);
  std::string stale = (*first)["metadata"]["resourceVersion"];
  ASSERT_TRUE(client
                  .Patch(std::string(kPods) + "/a",
                         {{"metadata", {{"labels", {{"x", "1"}}}}}})
                  .ok());
  Status conflict =
      client
          .Patch(std::string(kPods) + "/a",
                 {{"metadata",
                   {{"resourceVersion", stale}, {"labels", {{"x", "2"}}}}}})
          .status();
  EXPECT_EQ(conflict.code(), Status::Code::kAborted);
}

TEST_F(KubeClientTest, RetriesTransientErrorsThenGivesUp) {
  KubeClient client = Client(Config());
  ASSERT_TRUE(client.Create(kPods, Pod("a", "bert")).ok());
  server_.FailNext(2, 503);
  int before = server_.requests();
  EXPECT_TRUE(client.Get(std::string(kPods) + "/a").ok());
  EXPECT_EQ(server_.requests() - before, 3);
  server_.FailNext(10, 500);
  Status s = client.Get(std::string(kPods) + "/a").status();
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_NE(s.message().find("after 3 attempts"), std::string::npos);
  EXPECT_EQ(s.message().find(kToken), std::string::npos);
  server_.FailNext(0, 0);
  server_.FailNext(1, 400);
  EXPECT_EQ(client.Get(std::string(kPods) + "/a").status().code(),
            Status::Code::kInvalidArgument);  // not retried
}

TEST_F(KubeClientTest, VerifiesTheServerAndSendsTheToken) {
  KubeConfig wrong_ca = Config();
  wrong_ca.ca_pem =
      MakeTestCertificate(testing::TempDir() + "/other-ca").value().cert_pem;
  Status s = Client(wrong_ca).Get("/api/v1/nodes").status();
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(s.message().find(kToken), std::string::npos);
  KubeConfig wrong_token = Config();
  wrong_token.token = "nope";
  Status denied = Client(wrong_token).Get("/api/v1/nodes").status();
  EXPECT_EQ(denied.code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(denied.message().find("nope"), std::string::npos);
}

TEST_F(KubeClientTest, WatchSeesChangesInOrderFromAVersion) {
  KubeClient client = Client(Config());
  ASSERT_TRUE(client.Create(kPods, Pod("old", "bert")).ok());
  auto list = client.List(kPods);
  ASSERT_TRUE(list.ok());
  std::string from = (*list)["metadata"]["resourceVersion"];
  std::vector<std::string> seen;
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    KubeClient w = Client(Config());
    EXPECT_TRUE(w.Create(kPods, Pod("a", "bert")).ok());
    EXPECT_TRUE(w.Create(kPods, Pod("b", "resnet")).ok());
    EXPECT_TRUE(w.Patch(std::string(kPods) + "/a",
                        {{"metadata", {{"annotations", {{"k", "v"}}}}}})
                    .ok());
    EXPECT_TRUE(w.Delete(std::string(kPods) + "/a").ok());
  });
  Status s = client.Watch(
      kPods, "labelSelector=" + KubeClient::Escape("migserve.io/service=bert"),
      from, 5, [&](const Json& event) {
        seen.push_back(event["type"].get<std::string>() + " " +
                       event["object"]["metadata"]["name"].get<std::string>());
        return seen.size() < 3;
      });
  writer.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(seen,
            (std::vector<std::string>{"ADDED a", "MODIFIED a", "DELETED a"}));
}

// An answer, or a watch's event, is bounded like every other input
// (issue 92: a 300 MB object was read on): past MIGSERVE_MAX_INPUT_MB the
// request fails naming the limit, read no further and not tried again.
TEST_F(KubeClientTest, AnAnswerLargerThanTheInputLimitIsRefused) {
  KubeClient client = Client(Config());
  Json big = {{"metadata", {{"name", "big"}}},
              {"data", {{"blob", std::string(2 << 20, 'x')}}}};
  ASSERT_TRUE(client.Create("/api/v1/namespaces/ns/configmaps", big).ok());
  setenv("MIGSERVE_MAX_INPUT_MB", "1", 1);
  int before = server_.requests();
  auto got = client.Get("/api/v1/namespaces/ns/configmaps/big");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "GET /api/v1/namespaces/ns/configmaps/big: the answer is larger "
            "than 1 MiB, the most migserve reads of one input "
            "(MIGSERVE_MAX_INPUT_MB raises it)");
  EXPECT_EQ(server_.requests() - before, 1);  // not tried again
  Status watched = client.Watch("/api/v1/namespaces/ns/configmaps", "", "0", 2,
                                [](const Json&) { return true; });
  EXPECT_NE(watched.message().find("watch: an event is larger than 1 MiB"),
            std::string::npos)
      << watched.ToString();
  unsetenv("MIGSERVE_MAX_INPUT_MB");
  EXPECT_TRUE(client.Get("/api/v1/namespaces/ns/configmaps/big").ok());
}

std::string Base64(const std::string& text) {
  std::string out(4 * ((text.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

TEST_F(KubeClientTest, KubeconfigWithCaDataAndTokenReachesTheServer) {
  std::string path = testing::WriteTempFile(
      "kubeconfig",
      "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
      "contexts:\n- name: test\n  context: {cluster: c, user: u, "
      "namespace: serving}\n"
      "clusters:\n- name: c\n  cluster:\n    server: " +
          server_.url() + "\n    certificate-authority-data: " +
          Base64(Certificate().cert_pem) +
          "\nusers:\n- name: u\n  user: {token: " + kToken + "}\n");
  auto config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->namespace_, "serving");
  EXPECT_EQ(config->ca_pem, Certificate().cert_pem);
  EXPECT_TRUE(Client(*config).List("/api/v1/nodes").ok());
  EXPECT_EQ(LoadKubeconfig(path, "nope").status().code(),
            Status::Code::kInvalidArgument);
  std::string insecure = testing::WriteTempFile(
      "kubeconfig-insecure",
      "current-context: t\ncontexts:\n- name: t\n  context: {cluster: c}\n"
      "clusters:\n- name: c\n  cluster: {server: 'https://x', "
      "insecure-skip-tls-verify: true}\n");
  Status refused = LoadKubeconfig(insecure).status();
  EXPECT_NE(refused.message().find("insecure-skip-tls-verify"),
            std::string::npos);
}

TEST(InClusterConfigTest, ReadsTheServiceAccount) {
  std::string dir = testing::TempDir() + "/sa";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteFileAtomic(dir + "/token", "abc\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/ca.crt", "PEM").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/namespace", "migserve\n").ok());
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_FALSE(InClusterConfig(dir).ok());
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto config = InClusterConfig(dir);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->server, "https://10.0.0.1:443");
  EXPECT_EQ(config->token, "abc");
  EXPECT_EQ(config->namespace_, "migserve");
  unsetenv("KUBERNETES_SERVICE_HOST");
}

}  // namespace
}  // namespace migserve::kube
