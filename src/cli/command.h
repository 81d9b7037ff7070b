// What every subcommand shares: its streams, its exit code, and how a
// failure becomes a message and an exit code (DESIGN 4: 0 success, 1 the
// answer is no, 2 bad input or usage).
#ifndef MIGSERVE_CLI_COMMAND_H_
#define MIGSERVE_CLI_COMMAND_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>

#include "optimizer/optimizer.h"
#include "util/status.h"

namespace migserve::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNo = 1;
inline constexpr int kExitBadInput = 2;
// A signal stopped a search; what it had was written (128 + SIGINT).
inline constexpr int kExitInterrupted = 130;

struct CommandContext {
  std::ostream& out;  // machine-readable output
  std::ostream& err;  // messages and progress
  int exit_code = kExitOk;
  // How often a long phase that reports no other progress (the credits)
  // says how far it is on err: every second to a terminal, every ten
  // seconds to a file or pipe; 0 (callers in-process, tests): never.
  double progress_every_s = 0;
  // --quiet: no progress at all, only results, warnings and errors.
  bool quiet = false;

  // Says one line of progress on err, unless --quiet.
  void Progress(const std::string& line) {
    if (!quiet) err << line << std::endl;
  }

  // Prints "migserve: <message>" to err and sets the exit code: 2 for bad
  // input (InvalidArgument, NotFound), 1 for everything else (a "no", a
  // server that cannot be reached, a transition that failed). Returns it.
  int Fail(const Status& status);

  // Writes `text` to stdout if `path` is empty or "-", else atomically to
  // the file `path`. Returns the write's error.
  [[nodiscard]] Status Emit(const std::string& path, const std::string& text);
  // As Emit, for a command whose output merges into the file it names
  // (`import vllm-bench -o runs.csv` adds to runs.csv): `path` may be a
  // file it read, to merge.
  [[nodiscard]] Status EmitMerged(const std::string& path,
                                  const std::string& text);
};

// InvalidArgument "PATH: is an input of this command; write the output to
// another file": what Emit and a merging command say of an output that is
// also an input.
Status OutputIsAnInput(const std::string& path);

// Makes `run` the command's callback: a failure it returns is reported
// with CommandContext::Fail. `run` runs after every flag is parsed (the
// `--gpu-table` files added to the GPU catalog) and with the registries
// frozen (util/registry_freeze.h: the catalog, the router and service
// kinds) until it returns.
void OnRun(CLI::App* app, CommandContext* context, std::function<Status()> run);

// A subcommand: its name, one-line help, and a function that adds its
// options to `app` and sets its callback.
struct CommandSpec {
  const char* name;
  const char* help;
  void (*setup)(CLI::App* app, CommandContext* context);
};

// Adds --time-limit, --seed, --threads and the algorithms' options
// (optimize, compare), and sends progress lines to context->err.
void AddSolveOptions(CLI::App* app, optimizer::SolveOptions* solve,
                     CommandContext* context);

// The setup functions, one per file.
void SetupGpus(CLI::App* app, CommandContext* context);
void SetupOptimize(CLI::App* app, CommandContext* context);
void SetupCompare(CLI::App* app, CommandContext* context);
void SetupValidate(CLI::App* app, CommandContext* context);
void SetupImport(CLI::App* app, CommandContext* context);
// import's kinds for LLM benchmark results (called by SetupImport).
void SetupImportLlm(CLI::App* app, CommandContext* context);
void SetupGenerate(CLI::App* app, CommandContext* context);
void SetupModels(CLI::App* app, CommandContext* context);
void SetupLlmSlices(CLI::App* app, CommandContext* context);
void SetupPlan(CLI::App* app, CommandContext* context);
void SetupSimulate(CLI::App* app, CommandContext* context);
void SetupExport(CLI::App* app, CommandContext* context);
void SetupPlace(CLI::App* app, CommandContext* context);
void SetupObserve(CLI::App* app, CommandContext* context);
void SetupController(CLI::App* app, CommandContext* context);
void SetupAgent(CLI::App* app, CommandContext* context);
void SetupRouter(CLI::App* app, CommandContext* context);
void SetupDoctor(CLI::App* app, CommandContext* context);
void SetupReport(CLI::App* app, CommandContext* context);
void SetupShow(CLI::App* app, CommandContext* context);
void SetupServe(CLI::App* app, CommandContext* context);
void SetupReplay(CLI::App* app, CommandContext* context);
void SetupAutoscale(CLI::App* app, CommandContext* context);
void SetupCompletion(CLI::App* app, CommandContext* context);

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_COMMAND_H_
