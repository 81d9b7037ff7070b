// migserve gpus [--gpu NAME] [--legacy-4g3g] [--optional-profiles]
//               [--format table|json]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/table.h"
#include "mig/gpu_catalog.h"
#include "mig/layout_enumerator.h"

namespace migserve::cli {
namespace {

struct GpusFlags {
  std::string gpu;
  mig::MigOptions mig;
  std::string format = "table";
};

nlohmann::ordered_json GpuJson(const mig::GpuModel& gpu,
                               const mig::MigOptions& options) {
  nlohmann::ordered_json profiles = nlohmann::ordered_json::array();
  for (const mig::Profile& p : gpu.profiles) {
    profiles.push_back({{"name", p.name},
                        {"compute_slices", p.compute_slices},
                        {"memory_slices", p.memory_slices},
                        {"memory_gb", p.memory_gb},
                        {"placements", p.starts},
                        {"nvml_id", p.nvml_id},
                        {"enabled", options.Enabled(p)}});
  }
  nlohmann::ordered_json products = nlohmann::ordered_json::array();
  for (const mig::Product& p : gpu.products) {
    products.push_back(
        {{"pci_device_id", fmt::format("{:#06x}", p.pci_device_id)},
         {"name", p.name}});
  }
  std::vector<std::string> ids;
  for (int id : gpu.pci_device_ids) ids.push_back(fmt::format("{:#06x}", id));
  return {{"name", gpu.name},
          {"aliases", gpu.aliases},
          {"pci_device_ids", ids},
          {"products", products},
          {"compute_slices", gpu.compute_slices},
          {"memory_slices", gpu.memory_slices},
          {"memory_gb", gpu.memory_gb},
          {"profiles", profiles},
          {"maximal_layouts", mig::MaximalLayouts(gpu, options).size()}};
}

void PrintGpu(const mig::GpuModel& gpu, const mig::MigOptions& options,
              bool list_layouts, std::ostream& out) {
  out << fmt::format(
      "{}: {} compute slices, {} memory slices, {} GB{}\n", gpu.name,
      gpu.compute_slices, gpu.memory_slices, gpu.memory_gb,
      gpu.legacy_4g3g ? " (pre-R510 drivers: no 4g with 3g)" : "");
  TextTable table(
      {"profile", "compute", "memory", "GB", "starts", "max", "enabled"});
  for (const mig::Profile& p : gpu.profiles) {
    table.AddRow({p.name, std::to_string(p.compute_slices),
                  std::to_string(p.memory_slices),
                  fmt::format("{}", p.memory_gb),
                  fmt::format("{}", fmt::join(p.starts, ",")),
                  p.max_count > 0 ? std::to_string(p.max_count) : "-",
                  options.Enabled(p) ? "yes" : "no"});
  }
  table.Print(out);
  std::vector<mig::Layout> maximal = mig::MaximalLayouts(gpu, options);
  std::vector<mig::Layout> representative;
  std::vector<mig::Multiset> multisets =
      mig::DistinctMultisets(gpu, maximal, &representative);
  out << fmt::format(
      "legal layouts: {}; maximal: {} placed, {} distinct multisets\n",
      mig::LegalLayouts(gpu, options).size(), maximal.size(), multisets.size());
  if (list_layouts) {
    for (const mig::Layout& l : maximal) out << "  " << l.ToString(gpu) << "\n";
  }
  out << "\n";
}

Status RunGpus(const GpusFlags& flags, CommandContext* context) {
  const mig::GpuCatalog& catalog = mig::GpuCatalog::Default();
  std::vector<const mig::GpuModel*> models = catalog.models();
  if (!flags.gpu.empty()) {
    auto gpu = catalog.Find(flags.gpu);
    if (!gpu.ok()) return gpu.status().WithPrefix("--gpu");
    models = {*gpu};
  }
  if (flags.format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const mig::GpuModel* gpu : models) {
      out.push_back(GpuJson(*gpu, flags.mig));
    }
    context->out << out.dump(2) << "\n";
    return Status::Ok();
  }
  for (const mig::GpuModel* gpu : models) {
    PrintGpu(*gpu, flags.mig, !flags.gpu.empty(), context->out);
  }
  return Status::Ok();
}

}  // namespace

void SetupGpus(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<GpusFlags>();
  app->add_option("--gpu", flags->gpu,
                  "Show only this GPU model, with its maximal layouts");
  app->add_flag("--legacy-4g3g", flags->mig.legacy_4g3g,
                "Apply the pre-R510 A100 rule (no 4g with 3g)");
  app->add_flag("--optional-profiles", flags->mig.optional_profiles,
                "Also use +me and double-memory 1g profiles");
  app->add_option("--format", flags->format,
                  "table, or json (per model: name, pci_device_ids, profiles "
                  "with placements, maximal_layouts count)")
      ->capture_default_str()
      ->check(OneOf({"table", "json"}));
  OnRun(app, context, [flags, context] { return RunGpus(*flags, context); });
}

}  // namespace migserve::cli
