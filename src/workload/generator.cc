#include "workload/generator.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <random>

#include "mig/gpu_catalog.h"
#include "workload/capacity_matrix.h"
#include "workload/relaxed_bound.h"

namespace migserve::workload {

Status GenerateOptions::Validate() const {
  if (services < 1) return Status::InvalidArgument("--services must be >= 1");
  if (mean <= 0) return Status::InvalidArgument("--mean must be > 0");
  if (stddev < 0) return Status::InvalidArgument("--stddev must be >= 0");
  if (sigma < 0) return Status::InvalidArgument("--sigma must be >= 0");
  if (latencies_ms.empty()) {
    return Status::InvalidArgument("--latency needs at least one value");
  }
  for (double l : latencies_ms) {
    if (l <= 0) return Status::InvalidArgument("--latency values must be > 0");
  }
  if (target_gpus < 0) {
    return Status::InvalidArgument("--target-gpus must be >= 0");
  }
  if (latency_budget <= 0) {
    return Status::InvalidArgument("--latency-budget must be > 0");
  }
  if (max_procs < 1) return Status::InvalidArgument("--max-procs must be >= 1");
  return Status::Ok();
}

StatusOr<Workload> GenerateWorkload(const profile::ProfileTable& profiles,
                                    const GenerateOptions& options) {
  MIGSERVE_RETURN_IF_ERROR(options.Validate());
  MIGSERVE_ASSIGN_OR_RETURN(const mig::GpuModel* gpu,
                            mig::GpuCatalog::Default().Find(options.gpu));
  std::vector<std::string> models = options.models;
  if (models.empty()) models = profiles.Models(gpu->name);
  if (models.empty()) {
    return Status::InvalidArgument(fmt::format("{}: no model is measured on {}",
                                               profiles.source, gpu->name));
  }
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<double> normal(options.mean, options.stddev);
  std::normal_distribution<double> log_normal(0.0, options.sigma);
  std::uniform_int_distribution<size_t> pick_latency(
      0, options.latencies_ms.size() - 1);

  Workload w;
  w.source = "generated";
  w.gpu = gpu->name;
  w.offers = {{gpu->name, 1}};
  w.latency_budget = options.latency_budget;
  w.capacity_model = options.capacity_model;
  w.max_procs = options.max_procs;
  std::map<std::string, int> per_model;
  std::vector<double> drawn;  // each service's rate, req/s
  for (int i = 0; i < options.services; ++i) {
    const std::string& model = models[i % models.size()];
    Service s;
    s.name = fmt::format("{}-{}", model, ++per_model[model]);
    s.model = model;
    drawn.push_back(options.distribution == RateDistribution::kNormal
                        ? std::max(0.05 * options.mean, normal(rng))
                        : options.mean * std::exp(log_normal(rng)));
    s.latency_ms = options.latencies_ms[pick_latency(rng)];
    w.services.push_back(std::move(s));
  }
  // Aim half a GPU below the target so that rounding the rates to whole
  // requests cannot move the ceiling. Under the p99 model a replica's
  // capacity depends on its service's rate, so scale until the bound
  // settles (a few rounds).
  double scale = 1;
  for (int round = 0; round < 8; ++round) {
    for (size_t i = 0; i < drawn.size(); ++i) {
      MIGSERVE_ASSIGN_OR_RETURN(
          w.services[i].throughput,
          Rate::Of(std::max(1.0, std::round(drawn[i] * scale))));
    }
    MIGSERVE_ASSIGN_OR_RETURN(CapacityMatrix caps,
                              CapacityMatrix::Build(w, profiles, *gpu));
    if (options.target_gpus == 0) break;
    double bound = RelaxedBound(caps, *gpu);
    if (std::abs(bound - (options.target_gpus - 0.5)) < 0.1) break;
    scale *= (options.target_gpus - 0.5) / bound;
  }
  return w;
}

}  // namespace migserve::workload
