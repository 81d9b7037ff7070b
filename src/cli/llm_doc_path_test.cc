// docs/llm.md's path from a benchmark to tokens runs as written (issue 89:
// it lacked `place`, without which no replica site matches the user's
// nodes): every `migserve` line of its first block, in order, in a
// directory holding the files it names (two services of the shipped
// mixed-llm workload with a measured run, the A100 profiles, an inventory, the
// replicas' addresses), each exiting 0.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "kube/testing/api_server_standin.h"
#include "kube/testing/real_kubectl.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;

// The commands of the first indented block after `heading`: its lines that
// start with "migserve" or "kubectl", continuation lines (a trailing '\')
// joined, split into words (no line quotes a word), the program first.
std::vector<std::vector<std::string>> Commands(const std::string& markdown,
                                               const std::string& heading) {
  std::istringstream in(markdown.substr(markdown.find(heading)));
  std::vector<std::vector<std::string>> commands;
  std::string line, pending;
  bool in_block = false;
  while (std::getline(in, line)) {
    bool indented = line.rfind("    ", 0) == 0;
    if (!indented && in_block && !line.empty()) break;
    if (!indented) continue;
    in_block = true;
    std::string text = pending + line.substr(4);
    if (!text.empty() && text.back() == '\\') {
      text.pop_back();
      pending = text + " ";
      continue;
    }
    pending.clear();
    if (text.rfind("migserve ", 0) != 0 && text.rfind("kubectl ", 0) != 0) {
      continue;
    }
    std::istringstream words(text);
    std::vector<std::string> args;
    for (std::string w; words >> w;) args.push_back(w);
    commands.push_back(args);
  }
  return commands;
}

TEST(LlmDocPathTest, TheDocumentedPathRunsAsWritten) {
  auto doc = ReadFile(SourcePath("docs/llm.md"));
  ASSERT_TRUE(doc.ok());
  auto commands =
      Commands(*doc, "## From a benchmark to tokens through the proxy");
  ASSERT_GE(commands.size(), 6u);
  const std::string dir = testing::TempDir() + "/llm-path";
  std::filesystem::create_directories(dir + "/proxy-run");
  namespace fs = std::filesystem;
  fs::copy_file(SourcePath("src/cli/testdata/llm-path/run.json"),
                dir + "/run.json");
  fs::copy_file(SourcePath("data/profiles/a100-80gb.csv"),
                dir + "/profiles.csv");
  // Step 2: the workload names the imported runs. Two of the shipped
  // mixed-llm workload's services, a DNN one and the chat the run
  // measured: the path, not the size, is what is checked (the whole
  // workload took 194 s under the sanitizers).
  auto mixed = ReadFile(SourcePath("data/workloads/mixed-llm.yaml"));
  ASSERT_TRUE(mixed.ok());
  std::string workload;
  std::istringstream lines(*mixed);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  - ", 0) != 0 ||
        line.find("{name: bert-1,") != std::string::npos ||
        line.find("{name: chat-8b,") != std::string::npos) {
      workload += line + "\n";
    }
  }
  ASSERT_NE(workload.find("chat-8b"), std::string::npos);
  ASSERT_TRUE(WriteFileAtomic(dir + "/workload.yaml",
                              workload + "llm_measurements: llm-runs.csv\n")
                  .ok());
  std::string inventory = "nodes:\n";
  for (int n = 0; n < 4; ++n) {
    inventory += "  - {name: gpu-a" + std::to_string(n) +
                 ", gpu: A100-SXM4-80GB, gpus: 8}\n";
  }
  ASSERT_TRUE(WriteFileAtomic(dir + "/inventory.yaml", inventory).ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/replicas.csv",
                              "service,node,gpu,start,address,port\n")
                  .ok());
  // The cluster `kubectl` applies to: the stand-in API server, which
  // serves discovery and OpenAPI for every kind export writes.
  kube::ApiServerStandIn server({"", "", "", 5});
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(
      WriteFileAtomic(dir + "/kubeconfig", server.KubeconfigYaml()).ok());
  // Without a kubectl that can (KubectlUnusable), the kubectl line is
  // named on stderr and left out.
  const std::string kubectl = kube::KubectlUnusable();
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  std::vector<std::string> ran;
  std::string applied;
  for (std::vector<std::string> args : commands) {
    const std::string program = args[0];
    args.erase(args.begin());
    ran.push_back(program + " " + args[0]);
    if (program == "kubectl" && !kubectl.empty()) {
      std::cerr << "LlmDocPathTest: kubectl " << args[0]
                << " not run: " << kubectl << "\n";
      continue;
    }
    if (program == "kubectl") {
      std::string line =
          "KUBECONFIG=kubeconfig KUBECACHEDIR=kubectl-cache "
          "kubectl";
      for (const std::string& a : args) line += " " + a;
      std::pair<int, std::string> ran = testing::RunShell(line);
      applied += ran.second;
      EXPECT_EQ(ran.first, 0) << line << ": " << applied;
      continue;
    }
    CliResult r = Cli(args);
    EXPECT_EQ(r.code, 0) << "migserve " << args[0] << ": " << r.err;
  }
  fs::current_path(before);
  EXPECT_EQ(ran, (std::vector<std::string>{
                     "migserve import", "migserve optimize", "migserve serve",
                     "migserve place", "migserve export", "kubectl apply",
                     "migserve router"}));
  // Every object of the two files was created, the chat's vLLM replicas
  // and the proxy among them, and nothing else was said.
  int objects = 0;
  for (const char* file : {"/out/replicas.yaml", "/out/proxy.yaml"}) {
    auto text = ReadFile(dir + file);
    ASSERT_TRUE(text.ok());
    objects += testing::CountMatches(*text, "(^|\n)kind: ");
  }
  if (kubectl.empty()) {
    EXPECT_EQ(testing::CountMatches(applied, " created\n"), objects) << applied;
    EXPECT_EQ(testing::CountMatches(applied, "\n"), objects) << applied;
    EXPECT_NE(applied.find("deployment.apps/chat-8b-"), std::string::npos)
        << applied;
  }
  EXPECT_TRUE(fs::exists(dir + "/out/proxy.yaml"));
  auto conf = ReadFile(dir + "/proxy-run/nginx.conf");
  ASSERT_TRUE(conf.ok());
  // The placed sites are the inventory's nodes.
  auto placed = ReadFile(dir + "/placed.json");
  ASSERT_TRUE(placed.ok());
  EXPECT_NE(placed->find("\"node\": \"gpu-a0\""), std::string::npos);
}

}  // namespace
}  // namespace migserve::cli
