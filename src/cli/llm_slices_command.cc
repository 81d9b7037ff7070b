// migserve llm-slices --model M --gpu G [--prompt-tokens N]
//     [--output-tokens N] [--llm-models FILE] [--measurements FILE]
//     [--format table|json]
// What each MIG profile of a GPU gives one replica of a language model
// (docs/llm.md): its KV cache room, the sequences of the given lengths it
// runs at once, its step time then and its output tokens per second, and
// what backs them (modelled, measured or calibrated).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/table.h"
#include "llm/calibration.h"
#include "llm/slice_model.h"
#include "mig/gpu_catalog.h"

namespace migserve::cli {
namespace {

struct LlmSlicesFlags {
  std::string model;
  std::string gpu;
  double prompt_tokens = 1024;
  double output_tokens = 256;
  std::string llm_models;
  std::string measurements;
  std::string format = "table";
};

struct SliceFigures {
  const mig::Profile* profile = nullptr;
  std::string refused;  // why the slice cannot hold the model; "" if it can
  llm::SliceCapacity slice;
  llm::Saturation full;
  std::string basis;
};

StatusOr<std::vector<SliceFigures>> FiguresOf(const LlmSlicesFlags& flags) {
  llm::LlmModelTable own;
  if (!flags.llm_models.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(own, llm::LoadLlmModels(flags.llm_models));
  }
  const llm::LlmModelTable& models =
      flags.llm_models.empty() ? llm::ShippedLlmModels() : own;
  MIGSERVE_ASSIGN_OR_RETURN(const llm::LlmModel* model,
                            models.Find(flags.model));
  const mig::GpuCatalog& catalog = mig::GpuCatalog::Default();
  auto gpu = catalog.Find(flags.gpu);
  if (!gpu.ok()) return gpu.status().WithPrefix("--gpu");
  llm::Calibrations calibrations;
  if (!flags.measurements.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(
        calibrations,
        llm::Calibrations::Load(flags.measurements, models, catalog));
  }
  std::vector<SliceFigures> out;
  for (const mig::Profile& profile : (*gpu)->profiles) {
    SliceFigures f;
    f.profile = &profile;
    llm::Calibrated calibrated = calibrations.For(*model, **gpu, profile);
    f.basis = calibrated.basis;
    auto slice = llm::SliceOf(*model, **gpu, profile, calibrated.engine);
    if (!slice.ok()) {
      f.refused = slice.status().message();
    } else {
      f.slice = *slice;
      f.full =
          llm::SaturationOf(*slice, flags.prompt_tokens, flags.output_tokens);
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string Json(const LlmSlicesFlags& flags,
                 const std::vector<SliceFigures>& figures) {
  nlohmann::ordered_json slices = nlohmann::ordered_json::array();
  for (const SliceFigures& f : figures) {
    nlohmann::ordered_json j = {{"profile", f.profile->name},
                                {"fits", f.refused.empty()}};
    if (!f.refused.empty()) {
      j["why"] = f.refused;
    } else {
      j["kv_tokens"] = f.slice.kv_tokens;
      j["sequences"] = f.full.sequences;
      j["step_ms"] = f.full.step_ms;
      j["output_tokens_per_s"] = f.full.output_tokens_per_s;
      if (f.full.sequences > 0) {
        j["bound"] = f.full.compute_bound ? "compute" : "memory";
      }
    }
    j["basis"] = f.basis;
    slices.push_back(std::move(j));
  }
  nlohmann::ordered_json j = {{"model", flags.model},
                              {"gpu", flags.gpu},
                              {"prompt_tokens", flags.prompt_tokens},
                              {"output_tokens", flags.output_tokens},
                              {"slices", slices}};
  return j.dump(2) + "\n";
}

Status RunLlmSlices(const LlmSlicesFlags& flags, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<SliceFigures> figures,
                            FiguresOf(flags));
  if (flags.format == "json") {
    context->out << Json(flags, figures);
    return Status::Ok();
  }
  TextTable table({"profile", "kv_tokens", "sequences", "step_ms",
                   "output_tok_s", "bound", "basis"});
  for (const SliceFigures& f : figures) {
    if (!f.refused.empty()) {
      table.AddRow({f.profile->name, "-", "-", "-", "-", "-", "refused"});
      continue;
    }
    table.AddRow(
        {f.profile->name, std::to_string(f.slice.kv_tokens),
         std::to_string(f.full.sequences),
         f.full.sequences ? fmt::format("{:.1f}", f.full.step_ms) : "-",
         fmt::format("{:.0f}", f.full.output_tokens_per_s),
         f.full.sequences ? (f.full.compute_bound ? "compute" : "memory") : "-",
         f.basis});
  }
  context->out << fmt::format(
      "{} on {}, requests of {:g} prompt and {:g} output tokens, the "
      "replica kept full (docs/llm.md):\n",
      flags.model, flags.gpu, flags.prompt_tokens, flags.output_tokens);
  table.Print(context->out);
  for (const SliceFigures& f : figures) {
    if (!f.refused.empty()) {
      context->out << fmt::format("{}: {}\n", f.profile->name, f.refused);
    }
  }
  return Status::Ok();
}

}  // namespace

void SetupLlmSlices(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<LlmSlicesFlags>();
  app->add_option("--model", flags->model,
                  "A model of the LLM table, e.g. llama-3.1-8b")
      ->required();
  app->add_option("--gpu", flags->gpu, "GPU model, e.g. H100-SXM5-80GB")
      ->required();
  app->add_option("--prompt-tokens", flags->prompt_tokens, "Mean prompt length")
      ->capture_default_str()
      ->check(Positive());
  app->add_option("--output-tokens", flags->output_tokens,
                  "Mean output length (at least 1)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e7));
  app->add_option("--llm-models", flags->llm_models,
                  "An LLM model table of your own (default: "
                  "data/llm/models.yaml, embedded)")
      ->check(CLI::ExistingFile);
  app->add_option("--measurements", flags->measurements,
                  "LLM measurement CSV (migserve import vllm-bench|aiperf) "
                  "correcting the figures")
      ->check(CLI::ExistingFile);
  app->add_option("--format", flags->format, "table, or json")
      ->capture_default_str()
      ->check(OneOf({"table", "json"}));
  OnRun(app, context,
        [flags, context] { return RunLlmSlices(*flags, context); });
}

}  // namespace migserve::cli
