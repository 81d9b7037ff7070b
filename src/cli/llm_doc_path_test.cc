// docs/llm.md's path from a benchmark to tokens runs as written (issue 89:
// it lacked `place`, without which no replica site matches the user's
// nodes): every `migserve` line of its first block, in order, in a
// directory holding the files it names (two services of the shipped
// mixed-llm workload with a measured run, the A100 profiles, an inventory, the
// replicas' addresses), each exiting 0.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;

// The commands of the first indented block after `heading`: its lines that
// start with "migserve", continuation lines (a trailing '\') joined, split
// into words (no line quotes a word).
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
    if (text.rfind("migserve ", 0) != 0) continue;
    std::istringstream words(text.substr(9));
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
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  std::vector<std::string> ran;
  for (const std::vector<std::string>& args : commands) {
    CliResult r = Cli(args);
    ran.push_back(args[0]);
    EXPECT_EQ(r.code, 0) << "migserve " << args[0] << ": " << r.err;
  }
  fs::current_path(before);
  EXPECT_EQ(ran, (std::vector<std::string>{"import", "optimize", "serve",
                                           "place", "export", "router"}));
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
