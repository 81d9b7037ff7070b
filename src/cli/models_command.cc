// migserve models -p P [--gpu G]
#include <fmt/format.h>

#include <set>

#include "cli/command.h"
#include "cli/table.h"
#include "mig/gpu_catalog.h"
#include "profile/model_class.h"
#include "profile/profile_csv.h"

namespace migserve::cli {
namespace {

struct ModelsFlags {
  std::string profiles;
  std::string gpu;
};

Status RunModels(const ModelsFlags& flags, CommandContext* context) {
  auto table = profile::LoadProfileCsv(flags.profiles);
  if (!table.ok()) {
    return table.status();
  }
  std::set<std::string> gpus;
  for (const profile::ProfileRow& r : table->rows) gpus.insert(r.gpu);
  if (!flags.gpu.empty()) {
    auto gpu = mig::GpuCatalog::Default().Find(flags.gpu);
    if (!gpu.ok()) {
      return gpu.status().WithPrefix("--gpu");
    }
    if (!gpus.contains((*gpu)->name)) {
      return Status::InvalidArgument(fmt::format(
          "--gpu: {} has no rows for {}; it has rows for: {}", flags.profiles,
          (*gpu)->name,
          gpus.empty() ? "none" : fmt::format("{}", fmt::join(gpus, ", "))));
    }
    gpus = {(*gpu)->name};
  }
  for (const std::string& name : gpus) {
    const mig::GpuModel* gpu = mig::GpuCatalog::Default().Find(name).value();
    context->out << fmt::format(
        "{}: ratio = whole-GPU throughput / per-slice throughput of the "
        "smallest instance; linear in [{}, {}] (paper 2.2)\n",
        name, profile::kLinearLow, profile::kLinearHigh);
    TextTable out({"model", "batch", "smallest", "ratio", "class"});
    std::set<std::pair<std::string, int>> left_out;
    for (const profile::ProfileRow& r : table->rows) {
      if (r.gpu == name) left_out.emplace(r.model, r.batch);
    }
    for (const profile::ModelClass& c : profile::ClassifyModels(*table, *gpu)) {
      out.AddRow({c.model, std::to_string(c.batch), c.smallest_profile,
                  fmt::format("{:.2f}", c.ratio),
                  profile::ScalingName(c.scaling)});
      left_out.erase({c.model, c.batch});
    }
    out.Print(context->out);
    if (!left_out.empty()) {
      std::vector<std::string> named;
      for (const auto& [model, batch] : left_out) {
        named.push_back(fmt::format("{} batch {}", model, batch));
      }
      context->err << fmt::format(
          "models: left out on {} (a class needs a one-process row on the "
          "whole GPU and on a smaller instance): {}\n",
          name, fmt::join(named, ", "));
    }
  }
  return Status::Ok();
}

}  // namespace

void SetupModels(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ModelsFlags>();
  app->add_option("-p,--profiles", flags->profiles, "Profile CSV (- for stdin)")
      ->required();
  app->add_option("--gpu", flags->gpu, "Only this GPU model");
  OnRun(app, context, [flags, context] { return RunModels(*flags, context); });
}

}  // namespace migserve::cli
