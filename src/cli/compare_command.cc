// migserve compare -w W -p P [--time-limit S] [--format table|json] [-o F]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/table.h"
#include "deployment/validator.h"
#include "optimizer/milp/milp_optimizer.h"
#include "optimizer/registry.h"
#include "workload/relaxed_bound.h"

namespace migserve::cli {
namespace {

struct CompareFlags {
  std::string workload;
  std::string profiles;
  std::string format = "table";
  std::string output;  // "" or "-": stdout
  optimizer::SolveOptions solve;
};

struct Row {
  std::string name;
  std::string kind;  // algorithm or bound
  std::optional<int> gpus;
  std::optional<double> value;  // a bound's fractional value
  std::string status;
  std::optional<bool> valid;
  std::optional<double> seconds;
  std::string note;
};

nlohmann::json RowJson(const Row& r) {
  nlohmann::json j = {{"name", r.name}, {"kind", r.kind}};
  j["gpus"] = r.gpus ? nlohmann::json(*r.gpus) : nlohmann::json(nullptr);
  if (r.value) j["value"] = *r.value;
  j["status"] = r.status;
  if (r.valid) j["valid"] = *r.valid;
  if (r.seconds) j["seconds"] = *r.seconds;
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

Row BoundRow(const char* name, double value, const char* note) {
  Row row;
  row.name = name;
  row.kind = "bound";
  row.gpus = workload::CeilGpus(value);
  row.value = value;
  row.status = "bound";
  row.note = note;
  return row;
}

// The rows as a table, each algorithm against the best lower bound.
void PrintTable(const CompareFlags& flags, const Inputs& in,
                const std::vector<Row>& rows, const Row& bound,
                const Row& lp_row, const Row& cuts_row, std::ostream& out) {
  out << fmt::format("{}: {} services on {}\n", flags.workload,
                     in.workload.services.size(), in.gpu->name);
  // Against the best lower bound: a proven optimum, else the larger bound.
  int best_bound = std::max({*bound.gpus, *lp_row.gpus, *cuts_row.gpus});
  for (const Row& r : rows) {
    if (r.status == "optimal") best_bound = *r.gpus;
  }
  TextTable table({"algorithm", "kind", "GPUs", "vs best bound", "status",
                   "valid", "seconds", "note"});
  for (const Row& r : rows) {
    std::string vs = "-";
    if (r.gpus && r.kind == "algorithm") {
      vs = fmt::format("{:+.1f}%", 100.0 * (*r.gpus - best_bound) / best_bound);
    }
    table.AddRow({r.name, r.kind, r.gpus ? std::to_string(*r.gpus) : "-", vs,
                  r.status, r.valid ? (*r.valid ? "yes" : "NO") : "-",
                  r.seconds ? fmt::format("{:.3f}", *r.seconds) : "-", r.note});
  }
  table.Print(out);
}

// One row per algorithm: its GPUs, status, seconds, and whether its
// deployment is valid.
std::vector<Row> AlgorithmRows(const CompareFlags& flags, const Inputs& in,
                               CommandContext* context) {
  std::vector<Row> rows;
  for (const std::string& name : optimizer::AlgorithmNames()) {
    auto optimizer = optimizer::MakeOptimizer(name).value();
    context->err << fmt::format("compare: {}...\n", name);
    optimizer::RunResult run =
        optimizer::RunOptimizer(*optimizer, *in.problem, flags.solve);
    Row row;
    row.name = name;
    row.kind = "algorithm";
    row.status = deployment::SolveStatusName(run.outcome);
    if (run.outcome == optimizer::Outcome::kInfeasible) {
      row.note = run.reason;
      rows.push_back(std::move(row));
      continue;
    }
    const deployment::Summary& s = *run.deployment.summary;
    row.gpus = s.gpus;
    row.seconds = s.seconds;
    auto report =
        deployment::Validate(run.deployment, in.workload, in.profiles, *in.gpu);
    row.valid = report.ok() && report->ok();
    rows.push_back(std::move(row));
  }
  return rows;
}

Status RunCompare(const CompareFlags& flags, CommandContext* context) {
  if (flags.format != "table" && flags.format != "json") {
    return Status::InvalidArgument(fmt::format(
        "--format: expected table or json, got '{}'", flags.format));
  }
  auto inputs = LoadInputs(flags.workload, flags.profiles, context->err,
                           context->progress_every_s);
  if (!inputs.ok()) {
    return inputs.status();
  }
  const Inputs& in = **inputs;
  if (in.workload.offers.size() > 1) {
    return Status::InvalidArgument(fmt::format(
        "{} offers {} GPU types; compare runs one-type algorithms (use "
        "optimize --algo milp for the fleet)",
        flags.workload, in.workload.offers.size()));
  }
  std::vector<Row> rows = AlgorithmRows(flags, in, context);
  Row bound = BoundRow("relaxed", workload::RelaxedBound(*in.caps, *in.gpu),
                       "MIG rules ignored (paper 7)");
  rows.push_back(bound);
  optimizer::milp::LpBounds lp = optimizer::milp::LpBound(
      *in.problem,
      deployment::CompletionRates(in.workload.services.size(), 0.0),
      flags.solve.milp);
  Row lp_row =
      BoundRow("lp", lp.lp, "LP relaxation of the exact model, MIG rules kept");
  rows.push_back(lp_row);
  Row cuts_row = BoundRow("lp+cuts", lp.cuts,
                          "the LP with service cuts (each service's integer "
                          "hull)");
  rows.push_back(cuts_row);

  std::ostringstream text;
  if (flags.format == "json") {
    nlohmann::json j = {{"workload", flags.workload},
                        {"profiles", flags.profiles},
                        {"gpu", in.gpu->name},
                        {"services", in.workload.services.size()}};
    j["rows"] = nlohmann::json::array();
    for (const Row& r : rows) j["rows"].push_back(RowJson(r));
    text << j.dump(2) << "\n";
  } else {
    PrintTable(flags, in, rows, bound, lp_row, cuts_row, text);
  }
  MIGSERVE_RETURN_IF_ERROR(context->Emit(flags.output, text.str()));
  // Both formats: an algorithm that produced an invalid deployment is a
  // failure of the run, exit 1.
  std::vector<std::string> invalid;
  for (const Row& r : rows) {
    if (r.valid && !*r.valid) invalid.push_back(r.name);
  }
  if (!invalid.empty()) {
    return Status::Internal(fmt::format("{} produced an invalid deployment",
                                        fmt::join(invalid, ", ")));
  }
  return Status::Ok();
}

}  // namespace

void SetupCompare(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<CompareFlags>();
  AddWorkloadOptions(app, &flags->workload, &flags->profiles);
  app->add_option("--format", flags->format, "table or json")
      ->default_val(flags->format);
  app->add_option("-o,--output", flags->output,
                  "File to write the table to (default: stdout)");
  AddSolveOptions(app, &flags->solve, context);
  OnRun(app, context, [flags, context] { return RunCompare(*flags, context); });
}

}  // namespace migserve::cli
