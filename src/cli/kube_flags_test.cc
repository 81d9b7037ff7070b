// How commands find the API server when no --kubeconfig is given (as
// kubectl: $KUBECONFIG, then ~/.kube/config, then in-cluster), and what a
// server that cannot be reached does: named, exit 1 after the retries.
#include "cli/kube_flags.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cli/cli_test_util.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

// A kubeconfig whose server nothing listens on.
std::string Unreachable(const std::string& path,
                        const std::string& server = "https://127.0.0.1:1",
                        const std::string& token = "t") {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  EXPECT_TRUE(WriteFileAtomic(path,
                              "current-context: x\ncontexts:\n- name: x\n"
                              "  context: {cluster: c, user: u, namespace: "
                              "ns}\nclusters:\n- name: c\n  cluster: {server: "
                              "\"" +
                                  server +
                                  "\"}\nusers:\n- name: u\n"
                                  "  user: {token: \"" +
                                  token + "\"}\n")
                  .ok());
  return path;
}

class KubeFlagsTest : public ::testing::Test {
 protected:
  KubeFlagsTest() : home_(testing::TempDir() + "/home") {
    std::filesystem::create_directories(home_);
    setenv("HOME", home_.c_str(), 1);
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
  }
  std::string home_;
};

TEST_F(KubeFlagsTest, KubeconfigEnvironmentFirstExistingFile) {
  std::string file = Unreachable(testing::TempDir() + "/env/kc.yaml");
  setenv("KUBECONFIG", ("/nonexistent/kc.yaml:" + file).c_str(), 1);
  EXPECT_EQ(kube::DefaultKubeconfigPath(), file);
  auto config = LoadKube({});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->server, "https://127.0.0.1:1");
  EXPECT_EQ(config->namespace_, "ns");
  // --kubeconfig wins over the environment.
  EXPECT_FALSE(LoadKube({"/nonexistent/other.yaml", ""}).ok());
}

TEST_F(KubeFlagsTest, HomeKubeConfigWhenTheEnvironmentNamesNone) {
  std::string file = Unreachable(home_ + "/.kube/config");
  EXPECT_EQ(kube::DefaultKubeconfigPath(), file);
  setenv("KUBECONFIG", "/nonexistent/kc.yaml", 1);
  EXPECT_EQ(kube::DefaultKubeconfigPath(), file);
}

TEST_F(KubeFlagsTest, NoKubeconfigAnywhereFallsBackToInCluster) {
  EXPECT_EQ(kube::DefaultKubeconfigPath(), "");
  CliResult r = Cli({"observe"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not in a cluster"), std::string::npos) << r.err;
}

TEST_F(KubeFlagsTest, AnUnreachableServerIsNamedAndExitsOne) {
  Unreachable(home_ + "/.kube/config");
  CliResult r = Cli({"observe"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("API server https://127.0.0.1:1: GET "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(after 5 attempts)"), std::string::npos) << r.err;
}

// The bearer token never goes over plain http, except to a test server on
// this machine when asked; other schemes and control characters in the
// token (header injection) are refused before any request.
TEST_F(KubeFlagsTest, CredentialsGoOnlyOverTlsUnlessToALoopbackTestServer) {
  std::string dir = testing::TempDir() + "/transport/";
  auto observe = [&](const std::string& server, const std::string& token,
                     bool loopback) {
    std::string file = Unreachable(dir + "kc.yaml", server, token);
    std::vector<std::string> args = {"observe", "--kubeconfig", file};
    if (loopback) args.push_back("--insecure-loopback-http");
    return Cli(args);
  };
  CliResult r = observe("http://127.0.0.1:1", "t", false);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(dir + "kc.yaml: server 'http://127.0.0.1:1': refusing "
                             "to send the bearer token over plain http; use "
                             "https (or --insecure-loopback-http"),
            std::string::npos)
      << r.err;
  // Allowed: it gets as far as the (absent) server.
  r = observe("http://127.0.0.1:1", "t", true);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("API server http://127.0.0.1:1: GET "),
            std::string::npos)
      << r.err;
  for (const char* server : {"http://10.0.0.1:6443", "http://localhost.evil"}) {
    r = observe(server, "t", true);
    EXPECT_EQ(r.code, 2) << server;
    EXPECT_NE(r.err.find("refusing to send the bearer token"),
              std::string::npos)
        << r.err;
  }
  r = observe("file:///etc/passwd", "t", false);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("only https:// API servers are supported"),
            std::string::npos)
      << r.err;
  r = observe("https://127.0.0.1:1", "t\\r\\nX-Evil: 1", false);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("control character (0x0d at byte 1)"), std::string::npos)
      << r.err;
  // Without a token plain http carries nothing secret.
  r = observe("http://127.0.0.1:1", "", false);
  EXPECT_EQ(r.err.find("refusing"), std::string::npos) << r.err;
}

TEST_F(KubeFlagsTest, AMalformedKubeconfigIsAnErrorNotACrash) {
  // Found by fuzz/kubeconfig_fuzz.cc (corpus: scalar-root.yaml, and a
  // context that is a list).
  std::string scalar = testing::WriteTempFile("scalar.yaml", "just text\n");
  EXPECT_EQ(LoadKube({scalar, ""}).status().message(),
            scalar + ": expected a kubeconfig mapping");
  std::string list = testing::WriteTempFile(
      "list.yaml",
      "current-context: [a, b]\ncontexts: []\nclusters: []\nusers: []\n");
  auto config = LoadKube({list, ""});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(config.status().message().rfind(list + ":1: ", 0), 0u)
      << config.status().message();
}

// Credentials migserve would not use are refused by name and never shown:
// a credential plugin it cannot run as written (no apiVersion: client-go
// refuses it too), a password, a password in the server URL.
TEST_F(KubeFlagsTest, UnusedCredentialsAreRefusedWithoutShowingThem) {
  auto kubeconfig = [](const std::string& server, const std::string& user) {
    return "apiVersion: v1\ncurrent-context: c\nclusters:\n- name: k\n"
           "  cluster:\n    server: " +
           server +
           "\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
           "users:\n- name: u\n  user:\n" +
           user;
  };
  const std::pair<std::string, std::string> cases[] = {
      {kubeconfig("https://k.example:6443",
                  "    exec:\n      command: get-s3cret-token\n"),
       "users[u].user.exec.apiVersion: missing"},
      {kubeconfig("https://k.example:6443",
                  "    username: admin\n    password: s3cret\n"),
       "users[u].user.username: not supported"},
      {kubeconfig("https://admin:s3cret@k.example:6443", "    token: t\n"),
       "clusters[k].cluster.server: holds credentials"},
  };
  for (const auto& [text, message] : cases) {
    std::string file = testing::WriteTempFile("creds.yaml", text);
    auto config = LoadKube({file, ""});
    ASSERT_FALSE(config.ok()) << message;
    EXPECT_NE(config.status().message().find(message), std::string::npos)
        << config.status().message();
    EXPECT_EQ(config.status().message().find("s3cret"), std::string::npos)
        << config.status().message();
  }
}

}  // namespace
}  // namespace migserve::cli
