#include "controller/degraded_target.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/tolerance.h"

namespace migserve::controller {
namespace {

// What each serving GPU of the target gives each service, by service index.
using GpuCredit = std::map<int, double>;

bool Kept(double capacity, double required) {
  return capacity >= required * (1 - kRateTolerance);
}

double Share(double capacity, double required) {
  return required <= 0 ? 1 : std::min(1.0, capacity / required);
}

}  // namespace

std::optional<DegradedTarget> FitTarget(const cluster::ClusterState& observed,
                                        const deployment::Deployment& target) {
  std::map<std::string, int> have, over;
  for (const cluster::GpuState& g : observed.gpus) ++have[g.model->name];
  std::vector<size_t> serving;
  for (size_t g = 0; g < target.gpus.size(); ++g) {
    if (target.gpus[g].Serving()) {
      serving.push_back(g);
      ++over[target.GpuModelOf(g)];
    }
  }
  bool fits = true;
  for (auto& [model, count] : over) {
    // None of a model left is a target for another fleet, not a loss.
    if (have[model] == 0) return std::nullopt;
    count -= have[model];
    fits = fits && count <= 0;
  }
  if (fits) return std::nullopt;

  size_t n = target.services.size();
  std::vector<double> capacity(n, 0.0), required(n);
  std::map<std::string, int> index;
  for (size_t j = 0; j < n; ++j) {
    required[j] = target.services[j].throughput;
    index.emplace(target.services[j].name, static_cast<int>(j));
  }
  std::map<size_t, GpuCredit> credit;
  for (size_t g : serving) {
    for (const deployment::PlacedInstance& pi : target.gpus[g].instances) {
      auto j = pi.service ? index.find(*pi.service) : index.end();
      if (j == index.end()) continue;
      credit[g][j->second] += pi.throughput;
      capacity[j->second] += pi.throughput;
    }
  }
  std::vector<bool> dropped(target.gpus.size(), false);
  DegradedTarget out;
  for (;;) {
    auto lacking = std::find_if(over.begin(), over.end(),
                                [](const auto& o) { return o.second > 0; });
    if (lacking == over.end()) break;
    // (services kept, share served) after dropping GPU g, best last.
    std::pair<int, double> best_key{-1, 0};
    size_t best = 0;
    for (size_t g : serving) {
      if (dropped[g] || over[target.GpuModelOf(g)] <= 0) continue;
      int kept = 0;
      double served = 0;
      for (size_t j = 0; j < n; ++j) {
        auto it = credit[g].find(static_cast<int>(j));
        double left = capacity[j] - (it == credit[g].end() ? 0 : it->second);
        kept += Kept(left, required[j]) ? 1 : 0;
        served += Share(left, required[j]);
      }
      std::pair<int, double> key{kept, served};
      if (key >= best_key) {
        best_key = key;
        best = g;
      }
    }
    dropped[best] = true;
    --over[target.GpuModelOf(best)];
    ++out.dropped_gpus;
    for (const auto& [j, c] : credit[best]) capacity[j] -= c;
  }
  out.deployment = target;
  out.deployment.gpus.clear();
  for (size_t g = 0; g < target.gpus.size(); ++g) {
    if (!dropped[g]) out.deployment.gpus.push_back(target.gpus[g]);
  }
  std::vector<std::string> shorts;
  for (size_t j = 0; j < n; ++j) {
    if (Kept(capacity[j], required[j])) continue;
    workload::Service& s = out.deployment.services[j];
    out.short_services.push_back(s.name);
    shorts.push_back(fmt::format("{} ({:.6g} of {:.6g} req/s)", s.name,
                                 capacity[j], s.throughput));
    s.throughput = capacity[j];
  }
  out.description = fmt::format(
      "the cluster cannot hold the target: dropped {} of its {} serving GPUs; "
      "{}",
      out.dropped_gpus, serving.size(),
      shorts.empty() ? std::string("every service keeps its rate")
                     : "short: " + fmt::format("{}", fmt::join(shorts, ", ")));
  return out;
}

}  // namespace migserve::controller
