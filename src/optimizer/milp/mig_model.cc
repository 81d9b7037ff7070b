#include "optimizer/milp/mig_model.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "mig/layout_enumerator.h"
#include "util/tolerance.h"

namespace migserve::optimizer::milp {

using deployment::CompletionRates;
using deployment::GpuConfig;
using deployment::kIdle;

MigColumns MigColumns::Of(const Problem& problem, double cost,
                          const CompletionRates* initial) {
  MigColumns t;
  t.problem = &problem;
  t.cost = cost;
  t.multisets =
      mig::DistinctMultisets(problem.gpu, problem.maximal_layouts, &t.layouts);
  for (int j = 0; j < problem.num_services(); ++j) {
    if (initial != nullptr && deployment::Satisfied((*initial)[j])) continue;
    for (int p = 0; p < problem.caps.num_profiles(); ++p) {
      if (problem.caps.utility(j, p) > 0) t.z.emplace_back(j, p);
    }
  }
  return t;
}

void MigColumns::AddY(ModelBuilder* builder) {
  y = builder->AddColumns(static_cast<int>(multisets.size()), 0, COIN_DBL_MAX,
                          cost);
}

void MigColumns::AddZ(ModelBuilder* builder, double z_cost) {
  zs = builder->AddColumns(static_cast<int>(z.size()), 0, COIN_DBL_MAX, z_cost);
}

int MigColumns::ProfileOf(int column) const {
  int k = column - zs.first;
  return k >= 0 && k < zs.size ? z[k].second : -1;
}

void AddSupplyTerms(const MigColumns& t, int p, Row* row) {
  for (size_t m = 0; m < t.multisets.size(); ++m) {
    if (t.multisets[m][p] > 0) row->Add(t.y[m], -t.multisets[m][p]);
  }
  for (size_t k = 0; k < t.z.size(); ++k) {
    if (t.z[k].second == p) row->Add(t.zs[k], 1.0);
  }
}

void AddDemandTerms(const MigColumns& t, int j, Row* row) {
  for (size_t k = 0; k < t.z.size(); ++k) {
    if (t.z[k].first == j) {
      row->Add(t.zs[k], t.problem->caps.utility(j, t.z[k].second));
    }
  }
}

int LeastReplicas(const Problem& problem, int j) {
  int least = problem.workload.services[j].min_replicas;
  return least > 1 ? least : 0;
}

void AddCountTerms(const MigColumns& t, int j, Row* row) {
  for (size_t k = 0; k < t.z.size(); ++k) {
    if (t.z[k].first == j) row->Add(t.zs[k], 1.0);
  }
}

namespace {

// Adds service `j`'s spare rows (survive, one type `t`): returns its keep_j.
double AddSpareRows(const MigColumns& t, int j, double demand,
                    ModelBuilder* builder) {
  const Problem& problem = *t.problem;
  const workload::Workload& w = problem.workload;
  // Rounding noise must not make an exact cover look short.
  double keep =
      w.Kept(w.services[j]) / problem.caps.required(j) - kRateTolerance;
  double largest = 0;
  for (size_t k = 0; k < t.z.size(); ++k) {
    if (t.z[k].first == j) {
      largest = std::max(largest, problem.caps.utility(j, t.z[k].second));
    }
  }
  double need = std::max(demand, keep + largest);
  for (size_t k = 0; k < t.z.size(); ++k) {
    if (t.z[k].first != j) continue;
    double u = problem.caps.utility(j, t.z[k].second);
    Row kept;
    AddDemandTerms(t, j, &kept);
    kept.Add(t.uses[k], -u);
    builder->AddRow(kept, keep, COIN_DBL_MAX);
    Row uses;
    uses.Add(t.zs[k], 1.0);
    uses.Add(t.uses[k], -(std::ceil(need / u - kRoundingTolerance) +
                          LeastReplicas(problem, j)));
    builder->AddRow(uses, -COIN_DBL_MAX, 0.0);
  }
  return keep;
}

}  // namespace

void BuildMigModel(std::vector<MigColumns> types,
                   const CompletionRates& initial, bool spare,
                   MigModel* model) {
  ModelBuilder builder;
  for (MigColumns& t : types) {
    t.AddY(&builder);
    t.AddZ(&builder, 0);
  }
  spare = spare && types.size() == 1 && types.front().problem->workload.survive;
  if (spare) {
    MigColumns& t = types.front();
    t.uses = builder.AddColumns(static_cast<int>(t.z.size()), 0, 1, 0);
    model->keep.assign(t.problem->num_services(), -1);
  }
  for (MigColumns& t : types) {
    for (int p = 0; p < static_cast<int>(t.problem->gpu.profiles.size()); ++p) {
      Row supply;
      AddSupplyTerms(t, p, &supply);
      t.supply_rows.push_back(builder.AddRow(supply, -COIN_DBL_MAX, 0.0));
    }
  }
  const int num_services = types.front().problem->num_services();
  for (int j = 0; j < num_services; ++j) {
    if (deployment::Satisfied(initial[j])) continue;
    Row demand;
    for (const MigColumns& t : types) AddDemandTerms(t, j, &demand);
    // Rounding noise must not make an exact cover look short.
    builder.AddRow(demand, 1.0 - initial[j] - kRateTolerance, COIN_DBL_MAX);
    if (int least = LeastReplicas(*types.front().problem, j); least > 0) {
      Row count;
      for (const MigColumns& t : types) AddCountTerms(t, j, &count);
      builder.AddRow(count, least, COIN_DBL_MAX);
    }
    if (spare) {
      model->keep[j] = AddSpareRows(
          types.front(), j, 1.0 - initial[j] - kRateTolerance, &builder);
    }
  }
  builder.Load(&model->solver);
  model->types = std::move(types);
  model->columns = builder.columns();
}

std::vector<ServiceColumns> ServiceColumnsOf(const MigModel& model,
                                             const CompletionRates& initial) {
  std::vector<ServiceColumns> services;
  const int num_services = model.types.front().problem->num_services();
  for (int j = 0; j < num_services; ++j) {
    if (deployment::Satisfied(initial[j])) continue;
    ServiceColumns s;
    // Rounding noise must not make an exact cover look short.
    s.demand = 1.0 - initial[j] - kRateTolerance;
    s.least = LeastReplicas(*model.types.front().problem, j);
    if (!model.keep.empty()) s.keep = model.keep[j];
    for (const MigColumns& t : model.types) {
      for (size_t k = 0; k < t.z.size(); ++k) {
        if (t.z[k].first != j) continue;
        s.column.push_back(t.zs[k]);
        s.utility.push_back(t.problem->caps.utility(j, t.z[k].second));
        s.supply_row.push_back(t.supply_rows[t.z[k].second]);
        if (t.uses.size > 0) s.uses.push_back(t.uses[k]);
      }
    }
    services.push_back(std::move(s));
  }
  return services;
}

void AddConfigColumns(const MigColumns& t,
                      const std::vector<GpuConfig>& configs,
                      std::vector<double>* x) {
  std::map<std::pair<int, int>, int> column;
  for (size_t k = 0; k < t.z.size(); ++k) column[t.z[k]] = t.zs[k];
  for (const GpuConfig& c : configs) {
    // A config's layout may be any maximal one: find its multiset.
    mig::Multiset counts = c.layout.ProfileCounts(t.problem->gpu);
    auto m = std::find(t.multisets.begin(), t.multisets.end(), counts);
    if (m != t.multisets.end()) (*x)[t.y[m - t.multisets.begin()]] += 1;
    const auto& instances = c.layout.instances();
    for (size_t i = 0; i < instances.size(); ++i) {
      auto it = column.find({c.services[i], instances[i].profile});
      if (it != column.end()) (*x)[it->second] += 1;
    }
  }
}

std::vector<GpuConfig> PlaceMigColumns(const MigColumns& t, const double* x) {
  std::vector<GpuConfig> configs;
  for (size_t m = 0; m < t.multisets.size(); ++m) {
    int copies = static_cast<int>(std::lround(x[t.y[m]]));
    for (int k = 0; k < copies; ++k) {
      const mig::Layout& layout = t.layouts[m];
      configs.push_back({layout, std::vector<int>(layout.size(), kIdle)});
    }
  }
  for (size_t k = 0; k < t.z.size(); ++k) {
    auto [service, profile] = t.z[k];
    int want = static_cast<int>(std::lround(x[t.zs[k]]));
    for (GpuConfig& c : configs) {
      const auto& instances = c.layout.instances();
      for (size_t i = 0; i < instances.size() && want > 0; ++i) {
        if (instances[i].profile == profile && c.services[i] == kIdle) {
          c.services[i] = service;
          --want;
        }
      }
    }
  }
  return configs;
}

double FleetCost(const MigModel& model,
                 const std::vector<std::vector<GpuConfig>>& configs) {
  double cost = 0;
  for (size_t t = 0; t < configs.size(); ++t) {
    cost += model.types[t].cost * static_cast<double>(configs[t].size());
  }
  return cost;
}

double Objective(const MigModel& model, const std::vector<double>& x) {
  double cost = 0;
  for (const MigColumns& t : model.types) {
    for (size_t m = 0; m < t.multisets.size(); ++m) {
      cost += t.cost * static_cast<double>(std::lround(x[t.y[m]]));
    }
  }
  return cost;
}

std::optional<std::vector<double>> OneServiceGpus(
    const MigModel& model, const std::vector<ServiceColumns>& services) {
  std::vector<double> x(model.columns, 0.0);
  for (const ServiceColumns& s : services) {
    double best_price = 0;
    const MigColumns* best_type = nullptr;
    size_t best_m = 0;
    double best_utility = 0;
    double best_demand = 0;
    int best_instances = 0;  // the service's instances on one such GPU
    for (const MigColumns& t : model.types) {
      for (size_t m = 0; m < t.multisets.size(); ++m) {
        double u = 0;
        double largest = 0;
        int instances = 0;
        for (size_t k = 0; k < s.column.size(); ++k) {
          int p = t.ProfileOf(s.column[k]);
          if (p < 0 || t.multisets[m][p] == 0) continue;
          u += t.multisets[m][p] * s.utility[k];
          largest = std::max(largest, s.utility[k]);
          instances += t.multisets[m][p];
        }
        if (u <= 0) continue;
        // With survive, a cover also holds keep plus its largest instance.
        double demand =
            s.keep < 0 ? s.demand : std::max(s.demand, s.keep + largest);
        // Per unit of utility; with survive, the GPUs the cover takes.
        double price = s.keep < 0 ? t.cost / u : t.cost * std::ceil(demand / u);
        if (best_type == nullptr || price < best_price) {
          best_price = price;
          best_type = &t;
          best_m = m;
          best_utility = u;
          best_demand = demand;
          best_instances = instances;
        }
      }
    }
    if (best_type == nullptr) return std::nullopt;
    // Enough GPUs of the layout to meet the demand and the count.
    double gpus =
        std::max(std::ceil(best_demand / best_utility),
                 std::ceil(static_cast<double>(s.least) / best_instances));
    x[best_type->y[best_m]] += gpus;
    for (size_t k = 0; k < s.column.size(); ++k) {
      int p = best_type->ProfileOf(s.column[k]);
      if (p < 0 || best_type->multisets[best_m][p] == 0) continue;
      x[s.column[k]] += gpus * best_type->multisets[best_m][p];
      if (!s.uses.empty()) x[s.uses[k]] = 1;
    }
  }
  return x;
}

}  // namespace migserve::optimizer::milp
