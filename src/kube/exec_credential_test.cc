// Kubeconfigs as managed clusters write them (EKS, GKE, AKS, OIDC): a
// user.exec credential plugin, here a shell script of each shape, run as
// client-go runs one against the stand-in API server, which takes only the
// plugin's token (issue 90: every such kubeconfig was refused).
#include "kube/exec_credential.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <ctime>
#include <string>

#include "kube/kube_client.h"
#include "kube/kube_config.h"
#include "kube/testing/api_server_standin.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::kube {
namespace {

constexpr char kPluginToken[] = "plug1n-t0ken";
constexpr char kExecV1[] = "client.authentication.k8s.io/v1";
constexpr char kExecV1beta1[] = "client.authentication.k8s.io/v1beta1";

// An RFC 3339 time `seconds` from now.
std::string In(long seconds) {
  std::time_t t = std::time(nullptr) + seconds;
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

class ExecCredentialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    dir_ = testing::TempDir() + "/exec-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(system(("mkdir -p " + dir_).c_str()), 0);
  }

  // A plugin script of its own: `body` is bash; it counts its runs in
  // runs.txt.
  std::string Plugin(const std::string& body) {
    std::string path = dir_ + "/plugin" +
                       (plugins_++ == 0 ? "" : std::to_string(plugins_)) +
                       ".sh";
    EXPECT_TRUE(WriteFileAtomic(path, "#!/bin/bash\necho run >> " + dir_ +
                                          "/runs.txt\n" + body)
                    .ok());
    chmod(path.c_str(), 0755);
    return path;
  }
  // The credential a plugin prints, of `version`.
  static std::string Answer(const std::string& version,
                            const std::string& status) {
    return "cat <<'EOF'\n{\"apiVersion\": \"" + version +
           "\", \"kind\": \"ExecCredential\", \"status\": " + status +
           "}\nEOF\n";
  }
  // A kubeconfig whose user runs `exec` (YAML under `exec:`).
  std::string Kubeconfig(const std::string& exec) {
    std::string path = dir_ + "/kubeconfig";
    EXPECT_TRUE(WriteFileAtomic(
                    path,
                    "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                    "contexts:\n- name: c\n  context: {cluster: k, "
                    "user: eks}\nclusters:\n- name: k\n  cluster:\n"
                    "    server: " +
                        server_.url() +
                        "\nusers:\n- name: eks\n  user:\n    exec:\n" + exec)
                    .ok());
    return path;
  }
  StatusOr<KubeConfig> Load(const std::string& exec) {
    auto config = LoadKubeconfig(Kubeconfig(exec));
    if (config.ok()) config->allow_loopback_http = true;
    return config;
  }
  int Runs() {
    auto text = ReadFileIfExists(dir_ + "/runs.txt");
    int n = 0;
    for (char c : text) n += c == '\n';
    return n;
  }
  static std::string ReadFileIfExists(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) return "";
    std::string text;
    char buffer[256];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) {
      text.append(buffer, n);
    }
    std::fclose(f);
    return text;
  }

  ApiServerStandIn server_{{"", "", kPluginToken, 1}};
  std::string dir_;
  int plugins_ = 0;
};

// v1 and v1beta1, the token sent, the plugin run once while its
// credential holds; its arguments and env as the kubeconfig gives them.
TEST_F(ExecCredentialTest, EachVersionsTokenReachesTheServerOnce) {
  for (const char* version : {kExecV1, kExecV1beta1}) {
    std::string script = Plugin(
        "[ \"$1 $2\" = \"eks get-token\" ] || exit 5\n"
        "[ \"$CLUSTER\" = prod ] || exit 6\n"
        "echo \"$KUBERNETES_EXEC_INFO\" | grep -q '\"apiVersion\":\"" +
        std::string(version) + "\"' || exit 7\n" +
        Answer(version, std::string("{\"token\": \"") + kPluginToken +
                            "\", \"expirationTimestamp\": \"" + In(3600) +
                            "\"}"));
    std::remove((dir_ + "/runs.txt").c_str());
    auto config = Load(std::string("      apiVersion: ") + version +
                       "\n      command: " + script +
                       "\n      args: [eks, get-token]\n"
                       "      env: [{name: CLUSTER, value: prod}]\n"
                       "      interactiveMode: IfAvailable\n");
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    EXPECT_EQ(Runs(), 0);  // reading the kubeconfig runs nothing
    KubeClient client(*config, {2, 0.01, 10});
    for (int i = 0; i < 3; ++i) {
      auto nodes = client.List("/api/v1/nodes");
      EXPECT_TRUE(nodes.ok()) << version << ": " << nodes.status().ToString();
    }
    EXPECT_EQ(Runs(), 1) << version;
  }
}

// A credential past (or within 10 s of) its expirationTimestamp is asked
// for again; a refused one (401) too, once, and the request goes through.
TEST_F(ExecCredentialTest, AnExpiredOrRefusedCredentialIsAskedForAgain) {
  std::string soon = Plugin(
      Answer(kExecV1, std::string("{\"token\": \"") + kPluginToken +
                          "\", \"expirationTimestamp\": \"" + In(5) + "\"}"));
  auto config =
      Load(std::string("      apiVersion: ") + kExecV1 +
           "\n      command: " + soon + "\n      interactiveMode: Never\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  KubeClient client(*config, {2, 0.01, 10});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(client.List("/api/v1/nodes").ok());
  EXPECT_EQ(Runs(), 3);

  // The first token is stale: the server refuses it, the plugin runs
  // again and its second answer is taken.
  std::remove((dir_ + "/runs.txt").c_str());
  std::string stale = Plugin(
      "if [ $(wc -l < " + dir_ + "/runs.txt) = 1 ]; then\n" +
      Answer(kExecV1, "{\"token\": \"stale\"}") + "else\n" +
      Answer(kExecV1, std::string("{\"token\": \"") + kPluginToken + "\"}") +
      "fi\n");
  config =
      Load(std::string("      apiVersion: ") + kExecV1 +
           "\n      command: " + stale + "\n      interactiveMode: Never\n");
  ASSERT_TRUE(config.ok());
  KubeClient refreshed(*config, {2, 0.01, 10});
  auto nodes = refreshed.List("/api/v1/nodes");
  EXPECT_TRUE(nodes.ok()) << nodes.status().ToString();
  EXPECT_TRUE(refreshed.List("/api/v1/nodes").ok());
  EXPECT_EQ(Runs(), 2);
  EXPECT_EQ(config->exec->runs(), 2);
}

// provideClusterInfo: the plugin is told the cluster's server.
TEST_F(ExecCredentialTest, ThePluginIsToldTheClusterWhereAsked) {
  std::string script = Plugin(
      "echo \"$KUBERNETES_EXEC_INFO\" | grep -qF '\"server\":\"" +
      server_.url() + "\"' || exit 9\n" +
      Answer(kExecV1, std::string("{\"token\": \"") + kPluginToken + "\"}"));
  auto config = Load(std::string("      apiVersion: ") + kExecV1 +
                     "\n      command: " + script +
                     "\n      interactiveMode: Never\n"
                     "      provideClusterInfo: true\n");
  ASSERT_TRUE(config.ok());
  KubeClient client(*config, {1, 0.01, 10});
  auto nodes = client.List("/api/v1/nodes");
  EXPECT_TRUE(nodes.ok()) << nodes.status().ToString();
}

// What goes wrong is named: the user's plugin, how it failed, the hint;
// a kubeconfig client-go would refuse is refused when read.
TEST_F(ExecCredentialTest, APluginThatFailsIsNamed) {
  struct Case {
    std::string exec;
    std::string error;
  } cases[] = {
      {std::string("      apiVersion: ") + kExecV1 + "\n      command: " +
           Plugin("echo 'token expired, run aws sso login' >&2\nexit 3\n") +
           "\n      interactiveMode: Never\n",
       "users[eks].user.exec: the credential plugin '" + dir_ +
           "/plugin.sh' failed (exit status 3)"},
      {std::string("      apiVersion: ") + kExecV1 +
           "\n      command: no-such-plugin-here\n"
           "      interactiveMode: Never\n"
           "      installHint: install it with apt-get install x\n",
       "users[eks].user.exec: the credential plugin 'no-such-plugin-here' "
       "cannot run: No such file or directory; install it with apt-get "
       "install x"},
      {std::string("      apiVersion: ") + kExecV1 + "\n      command: " +
           Plugin(Answer(kExecV1beta1, "{\"token\": \"x\"}")) +
           "\n      interactiveMode: Never\n",
       "apiVersion: is client.authentication.k8s.io/v1beta1, but "
       "client.authentication.k8s.io/v1 was asked"},
      {std::string("      apiVersion: ") + kExecV1 + "\n      command: " +
           Plugin(Answer(kExecV1, "{}")) + "\n      interactiveMode: Never\n",
       "status.token: missing: the plugin gave neither a token nor a client "
       "certificate and key"},
      {std::string("      apiVersion: ") + kExecV1 + "\n      command: " +
           Plugin("echo not json\n") + "\n      interactiveMode: Never\n",
       "users[eks].user.exec: the plugin's ExecCredential"},
  };
  for (const Case& c : cases) {
    auto config = Load(c.exec);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    KubeClient client(*config, {1, 0.01, 10});
    auto nodes = client.List("/api/v1/nodes");
    ASSERT_FALSE(nodes.ok()) << c.exec;
    EXPECT_NE(nodes.status().message().find(c.error), std::string::npos)
        << nodes.status().message();
  }
  struct Refused {
    std::string exec;
    std::string error;
  } refused[] = {
      {"      command: x\n", "users[eks].user.exec.apiVersion: missing"},
      {std::string("      apiVersion: ") + kExecV1 + "\n      command: x\n",
       "users[eks].user.exec.interactiveMode: missing"},
      {std::string("      apiVersion: ") + kExecV1 +
           "\n      command: x\n      interactiveMode: Always\n",
       "users[eks].user.exec.interactiveMode: Always needs a terminal"},
      {"      apiVersion: client.authentication.k8s.io/v1alpha1\n"
       "      command: x\n",
       "must be client.authentication.k8s.io/v1 or v1beta1"},
      {std::string("      apiVersion: ") + kExecV1beta1 +
           "\n      command: x\n      comand: y\n",
       "users[eks].user.exec.comand: unknown field"},
  };
  for (const Refused& r : refused) {
    auto config = Load(r.exec);
    ASSERT_FALSE(config.ok()) << r.exec;
    EXPECT_NE(config.status().message().find(r.error), std::string::npos)
        << config.status().message();
  }
}

TEST(ParseExecCredentialTest, ReadsTokensCertificatesAndExpiry) {
  auto token = ParseExecCredential(
      R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
          "status": {"token": "t", "expirationTimestamp": "2030-01-02T03:04:05.5+01:00"}})",
      kExecV1, "k");
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(token->token, "t");
  ASSERT_TRUE(token->expires);
  std::tm tm{};
  tm.tm_year = 130;
  tm.tm_mon = 0;
  tm.tm_mday = 2;
  tm.tm_hour = 2;
  tm.tm_min = 4;
  tm.tm_sec = 5;
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*token->expires), timegm(&tm));
  auto cert = ParseExecCredential(
      R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
          "status": {"clientCertificateData": "C", "clientKeyData": "K"}})",
      kExecV1, "k");
  ASSERT_TRUE(cert.ok());
  EXPECT_EQ(cert->cert_pem, "C");
  EXPECT_EQ(cert->key_pem, "K");
  EXPECT_FALSE(cert->expires);
  for (
      const char* bad :
      {R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "a\r\nX-Evil: 1"}})",
       R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"clientCertificateData": "C"}})",
       R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "t", "expirationTimestamp": "tomorrow"}})",
       R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "Pod", "status": {"token": "t"}})",
       R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "kind": "ExecCredential", "status": {"token": "t"}})"}) {
    EXPECT_FALSE(ParseExecCredential(bad, kExecV1, "k").ok()) << bad;
  }
}

}  // namespace
}  // namespace migserve::kube
