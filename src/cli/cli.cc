#include "cli/cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "boundary/input_file.h"
#include "boundary/plain_name.h"
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "mig/gpu_catalog.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/parallel.h"
#include "util/registry_freeze.h"

namespace migserve::cli {
namespace {

constexpr CommandSpec kCommands[] = {
    {"gpus", "List GPU models, their MIG profiles and legal layouts",
     SetupGpus},
    {"optimize", "Find a deployment for a workload and write it as JSON",
     SetupOptimize},
    {"compare", "Run every algorithm and bound side by side", SetupCompare},
    {"validate", "Check a deployment's layouts and SLOs against a workload",
     SetupValidate},
    {"place", "Put a deployment on a fleet inventory's nodes and GPUs",
     SetupPlace},
    {"observe",
     "Write a live Kubernetes cluster as a placed deployment (read only)",
     SetupObserve},
    {"plan", "Plan a safe transition between two deployments (action DAG)",
     SetupPlan},
    {"simulate",
     "Run a transition on the simulated cluster and report its timeline",
     SetupSimulate},
    {"serve",
     "Simulate request-level serving of a deployment: p99 latency per "
     "service",
     SetupServe},
    {"replay",
     "Replay a rate trace through the autoscaling policy in simulated time",
     SetupReplay},
    {"autoscale",
     "Follow observed traffic: Prometheus rates in, target deployments out",
     SetupAutoscale},
    {"show", "Draw a deployment's GPUs in the terminal, grouped by node",
     SetupShow},
    {"report",
     "Write an HTML report: the deployment's GPUs, the transition, serving",
     SetupReport},
    {"export",
     "Write a deployment as a mig-parted config and Kubernetes objects",
     SetupExport},
    {"controller",
     "Keep a Kubernetes cluster at a target deployment (reconcile loop)",
     SetupController},
    {"agent", "Node agent: apply MIG repartitions through NVML", SetupAgent},
    {"doctor", "Say what will not work on a GPU Operator cluster (reads only)",
     SetupDoctor},
    {"router", "The proxy's control plane: run nginx and keep it at the routes",
     SetupRouter},
    {"import", "Convert published measurements into profiles and workloads",
     SetupImport},
    {"generate", "Generate a paper-style workload", SetupGenerate},
    {"models", "Classify models as linear, sub- or super-linear (paper 2.2)",
     SetupModels},
    {"llm-slices",
     "What each MIG profile gives a language model: KV room, tokens/s",
     SetupLlmSlices},
    {"completion", "Print a bash completion script (source <(migserve ...))",
     SetupCompletion},
};

// --gpu-table FILE on every command: the tables are added to the catalog as
// the option is parsed, before the command runs.
void AddGpuTableOption(CLI::App* app) {
  app->add_option_function<std::vector<std::string>>(
      "--gpu-table",
      [](const std::vector<std::string>& files) {
        for (const std::string& file : files) {
          StatusOr<mig::GpuModel> model = mig::LoadGpuModel(file);
          Status added = model.ok()
                             ? mig::GpuCatalog::AddToDefault(*std::move(model))
                             : model.status();
          if (!added.ok()) {
            throw CLI::ValidationError("--gpu-table", added.message());
          }
        }
      },
      "A GPU table of your own (YAML as in data/gpus/), added to the "
      "shipped ones; repeatable");
}

// --quiet on every command: no progress lines (the credits' included).
void AddQuietOption(CLI::App* app, CommandContext* context) {
  app->add_flag_callback(
      "-q,--quiet",
      [context] {
        context->quiet = true;
        context->progress_every_s = 0;
      },
      "No progress on stderr: only results, warnings and errors");
}

// --jobs N on every command: the threads the p99 credit searches use.
void AddJobsOption(CLI::App* app) {
  app->add_option_function<int>(
         "--jobs", [](int jobs) { SetJobs(jobs); },
         "Threads for the p99 credit searches (default: every core)")
      ->check(Between(1, 1024));
}

// The number of single-character edits between `a` and `b`.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "unknown command 'X'", with the nearest command if it is a typo away.
std::string UnknownCommand(const std::string& name) {
  const CommandSpec* nearest = nullptr;
  size_t distance = 0;
  for (const CommandSpec& command : kCommands) {
    size_t d = EditDistance(name, command.name);
    if (nearest == nullptr || d < distance) {
      nearest = &command;
      distance = d;
    }
  }
  std::string message = fmt::format("unknown command '{}'", name);
  if (distance <= 2) {
    message += fmt::format(" (did you mean '{}'?)", nearest->name);
  }
  return message + "; see migserve --help";
}

// The numeric flag of `command` given an empty value ("--seed ''" or
// "--seed="), or "": CLI11 reads one as 0 or as no value at all, either way
// silently. (A text flag may mean something by "": --grpc-listen "" is no
// gRPC listener.)
std::string EmptyNumber(const CLI::App& command,
                        const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    std::string flag;
    const std::string& a = args[i];
    if (a.size() > 2 && a[0] == '-' && a.find('=') == a.size() - 1) {
      flag = a.substr(0, a.size() - 1);
    } else if (a.empty() && args[i - 1].size() > 1 && args[i - 1][0] == '-' &&
               args[i - 1].find('=') == std::string::npos) {
      flag = args[i - 1];
    } else {
      continue;
    }
    const CLI::Option* option = command.get_option_no_throw(flag);
    if (option != nullptr && option->get_type_name().rfind("TEXT", 0) != 0) {
      return flag;
    }
  }
  return "";
}

}  // namespace

int CommandContext::Fail(const Status& status) {
  err << "migserve: " << Printable(status.message()) << "\n";
  exit_code = status.code() == Status::Code::kInvalidArgument ||
                      status.code() == Status::Code::kNotFound
                  ? kExitBadInput
              : status.code() == Status::Code::kAborted && Interrupted()
                  ? kExitInterrupted
                  : kExitNo;
  return exit_code;
}

Status CommandContext::Emit(const std::string& path, const std::string& text) {
  if (!path.empty() && path != "-" && WasRead(path)) {
    return OutputIsAnInput(path);
  }
  return EmitMerged(path, text);
}

Status OutputIsAnInput(const std::string& path) {
  return Status::InvalidArgument(fmt::format(
      "{}: is an input of this command; write the output to another file",
      path));
}

Status CommandContext::EmitMerged(const std::string& path,
                                  const std::string& text) {
  if (path.empty() || path == "-") {
    // Checked to the end: a full disk or a closed pipe behind stdout is an
    // error, not a silent loss.
    out << text;
    out.flush();
    if (!out) return Status::Unavailable("standard output: write failed");
    return Status::Ok();
  }
  return WriteFileAtomic(path, text);
}

void OnRun(CLI::App* app, CommandContext* context,
           std::function<Status()> run) {
  app->callback([context, run = std::move(run)] {
    // The --gpu-table files are in, every router and service kind too.
    FreezeRegistries frozen;
    Status status = run();
    if (!status.ok()) context->Fail(status);
  });
}

int RunCli(const std::vector<std::string>& args, std::ostream& out,
           std::ostream& err) {
  CommandContext context{out, err};
  if (&err == &std::cerr) context.progress_every_s = isatty(2) ? 1 : 10;
  ForgetReads();  // an earlier command's inputs are not this one's
  CLI::App app{
      "migserve: serve DNN models on NVIDIA Multi-Instance GPUs with the "
      "fewest GPUs",
      "migserve"};
  app.require_subcommand(1);
  app.fallthrough(false);
  app.set_version_flag("--version",
                       std::string("migserve ") + MIGSERVE_VERSION);
  for (const CommandSpec& command : kCommands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    command.setup(sub, &context);
    AddGpuTableOption(sub);
    AddJobsOption(sub);
    AddQuietOption(sub, &context);
  }
  SetJobs(0);
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' &&
      std::none_of(std::begin(kCommands), std::end(kCommands),
                   [&](const CommandSpec& c) { return args[0] == c.name; })) {
    err << "migserve: " << UnknownCommand(args[0]) << "\n";
    return kExitBadInput;
  }
  std::vector<CLI::App*> named = app.get_subcommands([&](CLI::App* sub) {
    return !args.empty() && sub->get_name() == args[0];
  });
  std::string empty = named.empty() ? "" : EmptyNumber(*named[0], args);
  if (!empty.empty()) {
    return context.Fail(Status::InvalidArgument(
        empty + ": an empty value; leave the flag out for its default"));
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, out, err);
    out.flush();
    if (code == 0 && !out) {
      return context.Fail(Status::Unavailable("standard output: write failed"));
    }
    return code == 0 ? kExitOk : kExitBadInput;
  }
  // Whatever a command printed reached standard output whole, or the
  // command failed: a full disk or a closed pipe is no success.
  out.flush();
  if (!out && context.exit_code == kExitOk) {
    return context.Fail(Status::Unavailable("standard output: write failed"));
  }
  return context.exit_code;
}

}  // namespace migserve::cli
