#include "controller/degraded_target.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "optimizer/milp/solve.h"
#include "util/tolerance.h"

namespace migserve::controller {
namespace {

// What each serving GPU of the target gives each service, by service index.
using GpuCredit = std::map<int, double>;

bool Kept(double capacity, double required) {
  return capacity >= required * (1 - kRateTolerance);
}

// The serving GPUs to drop, `over` of each model: the choice that keeps the
// most services at their floor, then serves the most of the required
// rates (each counted up to 1). A MILP over groups of GPUs of one model
// that give every service the same (of a group, the last in the target are
// dropped), solved by the MILP solver within a second (proven on the tested
// targets; at thousands of distinct GPUs, its best by then); should it find
// nothing, the last GPUs of each model go.
std::vector<bool> Dropped(const deployment::Deployment& target,
                          const std::vector<size_t>& serving,
                          const std::map<size_t, GpuCredit>& credit,
                          const std::vector<double>& required,
                          const std::vector<double>& floor,
                          const std::map<std::string, int>& over) {
  struct Group {
    std::string model;
    std::vector<size_t> gpus;  // in target order
  };
  std::map<std::pair<std::string, GpuCredit>, size_t> group_of;
  std::vector<Group> groups;
  std::map<std::string, int> candidates;  // per model, GPUs in groups
  size_t n = required.size();
  std::vector<double> fixed(n, 0.0);  // credit of the GPUs that all stay
  for (size_t g : serving) {
    const std::string& model = target.GpuModelOf(g);
    const GpuCredit& c = credit.at(g);
    if (over.at(model) <= 0) {
      for (const auto& [j, r] : c) fixed[j] += r;
      continue;
    }
    auto [it, fresh] = group_of.try_emplace({model, c}, groups.size());
    if (fresh) groups.push_back({model, {}});
    groups[it->second].gpus.push_back(g);
    ++candidates[model];
  }
  // Columns: per group the GPUs kept (x), per service kept-at-floor (m,
  // binary) and its share served (s, up to 1). Minimized: the negated
  // count kept, weighted above any sum of shares, and the shares.
  optimizer::milp::ModelBuilder builder;
  const double weight = static_cast<double>(n) + 1;
  optimizer::milp::Block x =
      builder.AddColumns(static_cast<int>(groups.size()), 0, 0, 0);
  for (size_t k = 0; k < groups.size(); ++k) {
    builder.SetUpper(x[k], static_cast<double>(groups[k].gpus.size()));
  }
  optimizer::milp::Block m =
      builder.AddColumns(static_cast<int>(n), 0, 1, -weight);
  optimizer::milp::Block s = builder.AddColumns(
      static_cast<int>(n), 0, 1, -1, optimizer::milp::ColumnKind::kContinuous);
  for (size_t j = 0; j < n; ++j) {
    if (required[j] <= 0) builder.SetLower(s[j], 1);
  }
  std::map<std::string, optimizer::milp::Row> per_model;
  std::vector<optimizer::milp::Row> capacity(n);
  for (size_t k = 0; k < groups.size(); ++k) {
    per_model[groups[k].model].Add(x[k], 1.0);
    for (const auto& [j, c] : credit.at(groups[k].gpus.front())) {
      capacity[j].Add(x[k], c);
    }
  }
  for (const auto& [model, row] : per_model) {
    // Exactly what the cluster has: keeping fewer gains nothing.
    int keep = candidates[model] - over.at(model);
    builder.AddRow(row, keep, keep);
  }
  for (size_t j = 0; j < n; ++j) {
    if (required[j] <= 0) continue;
    // fixed + capacity >= floor m_j (rounding noise is not short), and
    // required s_j <= fixed + capacity.
    optimizer::milp::Row kept = capacity[j];
    kept.Add(m[j], -floor[j] * (1 - kRateTolerance));
    builder.AddRow(kept, -fixed[j], optimizer::milp::kUnbounded);
    optimizer::milp::Row share = capacity[j];
    share.Add(s[j], -required[j]);
    builder.AddRow(share, -fixed[j], optimizer::milp::kUnbounded);
  }
  // Presolve off: with it the solver proved a worse choice optimal on one of
  // the random targets of KeepsTheBestSubsetByEnumeration.
  optimizer::milp::SolveAnswer answer = optimizer::milp::Solve(
      builder, {.seconds = 10, .nodes = 2000}, {.presolve = false});
  const double* best = answer.values.empty() ? nullptr : answer.values.data();
  std::vector<bool> dropped(target.gpus.size(), false);
  std::map<std::string, int> left = over;
  for (size_t k = 0; k < groups.size(); ++k) {
    size_t keep = best == nullptr
                      ? groups[k].gpus.size()
                      : static_cast<size_t>(std::lround(best[x[k]]));
    for (size_t i = keep; i < groups[k].gpus.size(); ++i) {
      dropped[groups[k].gpus[i]] = true;
      --left[groups[k].model];
    }
  }
  // No answer: the last GPUs of each model the cluster lacks go.
  for (auto g = serving.rbegin(); g != serving.rend(); ++g) {
    int& more = left[target.GpuModelOf(*g)];
    if (more > 0 && !dropped[*g]) {
      dropped[*g] = true;
      --more;
    }
  }
  return dropped;
}

}  // namespace

std::optional<DegradedTarget> FitTarget(
    const cluster::ClusterState& observed, const deployment::Deployment& target,
    const std::map<std::string, double>& before) {
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
  size_t over_total = 0;  // serving GPUs the cluster lacks
  for (auto& [model, count] : over) {
    // None of a model left is a target for another fleet, not a loss.
    if (have[model] == 0) return std::nullopt;
    count -= have[model];
    fits = fits && count <= 0;
    over_total += static_cast<size_t>(std::max(count, 0));
  }
  if (fits) return std::nullopt;

  size_t n = target.services.size();
  std::vector<double> capacity(n, 0.0), required(n), floor(n);
  std::map<std::string, int> index;
  for (size_t j = 0; j < n; ++j) {
    required[j] = target.services[j].throughput.value();
    auto kept = before.find(target.services[j].name);
    floor[j] = kept == before.end() ? required[j]
                                    : std::min(required[j], kept->second);
    index.emplace(target.services[j].name, static_cast<int>(j));
  }
  std::map<size_t, GpuCredit> credit;  // every serving GPU's, maybe empty
  for (size_t g : serving) {
    GpuCredit& gives = credit[g];
    for (const deployment::PlacedInstance& pi : target.gpus[g].instances) {
      auto j = pi.service ? index.find(*pi.service) : index.end();
      if (j == index.end()) continue;
      gives[j->second] += pi.credit;
      capacity[j->second] += pi.credit;
    }
  }
  std::vector<bool> dropped =
      Dropped(target, serving, credit, required, floor, over);
  DegradedTarget out;
  for (size_t g : serving) {
    if (!dropped[g]) continue;
    ++out.dropped_gpus;
    // Not below 0 by rounding: a service whose every GPU goes has none.
    for (const auto& [j, c] : credit[g]) {
      capacity[j] = std::max(0.0, capacity[j] - c);
    }
  }
  // The cluster as it is fits too: it stays where it is if it keeps more
  // services at their floor than the best part of the target would.
  std::map<std::string, double> has = observed.Capacity();
  int fit_at_floor = 0, now_at_floor = 0;
  for (size_t j = 0; j < n; ++j) {
    fit_at_floor += Kept(capacity[j], floor[j]) ? 1 : 0;
    now_at_floor += Kept(has[target.services[j].name], floor[j]) ? 1 : 0;
  }
  out.stays = now_at_floor > fit_at_floor;
  if (out.stays) {
    out.dropped_gpus = 0;
    out.deployment = cluster::ToDeployment(observed, target.services);
    for (size_t j = 0; j < n; ++j) capacity[j] = has[target.services[j].name];
  } else {
    out.deployment = target;
    out.deployment.gpus.clear();
    for (size_t g = 0; g < target.gpus.size(); ++g) {
      if (!dropped[g]) out.deployment.gpus.push_back(target.gpus[g]);
    }
  }
  // What is left promises its floors, not a second loss.
  out.deployment.survive.reset();
  std::vector<std::string> shorts;
  for (size_t j = 0; j < n; ++j) {
    if (Kept(capacity[j], required[j])) continue;
    workload::Service& s = out.deployment.services[j];
    out.short_services.push_back(s.name);
    shorts.push_back(fmt::format("{} ({:.6g} of {:.6g} req/s)", s.name,
                                 capacity[j], s.throughput.value()));
    // Below its required rate, so a rate.
    s.throughput = Rate::Of(capacity[j]).value();
  }
  std::string what =
      out.stays ? fmt::format(
                      "staying where it is: it keeps {} services at their "
                      "floor, the best {} of the target's {} serving GPUs "
                      "would keep {}",
                      now_at_floor, serving.size() - over_total, serving.size(),
                      fit_at_floor)
                : fmt::format("dropped {} of its {} serving GPUs",
                              out.dropped_gpus, serving.size());
  out.description = fmt::format(
      "the cluster cannot hold the target: {}; {}", what,
      shorts.empty() ? std::string("every service keeps its rate")
                     : "short: " + fmt::format("{}", fmt::join(shorts, ", ")));
  return out;
}

}  // namespace migserve::controller
