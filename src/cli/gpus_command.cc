// migserve gpus [--gpu NAME] [--legacy-4g3g] [--optional-profiles]
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/table.h"
#include "mig/gpu_catalog.h"
#include "mig/layout_enumerator.h"

namespace migserve::cli {
namespace {

struct GpusFlags {
  std::string gpu;
  mig::MigOptions mig;
};

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

}  // namespace

void SetupGpus(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<GpusFlags>();
  app->add_option("--gpu", flags->gpu,
                  "Show only this GPU model, with its maximal layouts");
  app->add_flag("--legacy-4g3g", flags->mig.legacy_4g3g,
                "Apply the pre-R510 A100 rule (no 4g with 3g)");
  app->add_flag("--optional-profiles", flags->mig.optional_profiles,
                "Also use +me and double-memory 1g profiles");
  app->callback([flags, context] {
    const mig::GpuCatalog& catalog = mig::GpuCatalog::Default();
    if (flags->gpu.empty()) {
      for (const mig::GpuModel& gpu : catalog.models()) {
        PrintGpu(gpu, flags->mig, false, context->out);
      }
      return;
    }
    auto gpu = catalog.Find(flags->gpu);
    if (!gpu.ok()) {
      context->Fail(gpu.status().WithPrefix("--gpu"));
      return;
    }
    PrintGpu(**gpu, flags->mig, true, context->out);
  });
}

}  // namespace migserve::cli
