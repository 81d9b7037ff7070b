// The exact model's MIG part (DESIGN 5), written once: per GPU type, y_m
// counts the GPUs of each distinct maximal multiset and z_jp the instances
// of profile p that service j gets; the supply rows (per type and profile)
// and the demand rows (per service, over every type). The plain and fleet
// model is these alone; the transition-aware model extends the same rows
// with its kept GPUs and replicas (transition_optimizer.cc).
//   supply:  sum_j z_jp - sum_m count_m(p) y_m <= 0
//   demand:  sum_tp u_jp z_tjp >= 1 - c_j
//   count:   sum_tp z_tjp >= min_replicas_j  (only where it is above 1)
// With survive (one GPU type), a service's spare is priced too: a loss
// takes at least its largest instance, so with w_jp = 1 when it uses
// profile p (a binary),
//   keep:    sum_p u_jp z_jp - u_jq w_jq >= keep_j   (per q it runs on)
//   uses:    z_jp - M_jp w_jp <= 0
// where keep_j is keep x its rate in units of its demand's and M_jp the
// most instances of p a cover of it takes.
#ifndef MIGSERVE_OPTIMIZER_MILP_MIG_MODEL_H_
#define MIGSERVE_OPTIMIZER_MILP_MIG_MODEL_H_

#include <coin/OsiClpSolverInterface.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "deployment/gpu_config.h"
#include "mig/layout.h"
#include "mig/layout_enumerator.h"
#include "optimizer/milp/model_builder.h"
#include "optimizer/milp/service_cuts.h"
#include "optimizer/problem.h"

namespace migserve::optimizer::milp {

// One GPU type's columns.
struct MigColumns {
  const Problem* problem = nullptr;
  double cost = 1;
  std::vector<mig::Multiset> multisets;
  std::vector<mig::Layout> layouts;    // one per multiset
  std::vector<std::pair<int, int>> z;  // (service, profile) of column zs[k]
  Block y;                             // one per multiset
  Block zs;                            // one per entry of z
  Block uses;  // survive's spare: one per entry of z, else empty
  std::vector<int> supply_rows;  // per profile, once added

  // The type's multisets, and a z for each (service, profile) the service
  // runs on, of services `initial` does not satisfy (null: every service).
  // No column is added yet.
  static MigColumns Of(const Problem& problem, double cost,
                       const deployment::CompletionRates* initial);

  // Adds the y block (objective: the type's cost) and the z block
  // (objective: `z_cost` each).
  void AddY(ModelBuilder* builder);
  void AddZ(ModelBuilder* builder, double z_cost);

  // The profile of column `column` if it is one of zs, else -1.
  int ProfileOf(int column) const;
};

// Adds to `row` type `t`'s terms of the supply row of profile `p` (<= 0).
void AddSupplyTerms(const MigColumns& t, int p, Row* row);
// Adds to `row` type `t`'s terms of the demand row of service `j`.
void AddDemandTerms(const MigColumns& t, int j, Row* row);
// Adds to `row` type `t`'s instances of service `j`, each counted once.
void AddCountTerms(const MigColumns& t, int j, Row* row);
// The instances service `j` must get: its min_replicas when above 1, else
// 0 (any cover of a positive demand has one).
int LeastReplicas(const Problem& problem, int j);

// The plain (or fleet) model, loaded into its solver.
struct MigModel {
  std::vector<MigColumns> types;
  // Per service, survive's keep_j (empty: no spare rows).
  std::vector<double> keep;
  int columns = 0;
  OsiClpSolverInterface solver;
};

// Builds the model of `types` from `initial` into `model`: per type its y
// and z blocks, the supply rows, then a demand row per service `initial`
// does not satisfy, and with `spare` (for a workload with survive, of one
// GPU type) its spare rows; minimizes the cost.
void BuildMigModel(std::vector<MigColumns> types,
                   const deployment::CompletionRates& initial, bool spare,
                   MigModel* model);

// The instance columns of each service `initial` does not satisfy, with
// the supply rows that price them (service cuts, dives).
std::vector<ServiceColumns> ServiceColumnsOf(
    const MigModel& model, const deployment::CompletionRates& initial);

// Adds the columns of type `t`'s `configs` to `x`: multiset and instance
// counts.
void AddConfigColumns(const MigColumns& t,
                      const std::vector<deployment::GpuConfig>& configs,
                      std::vector<double>* x);

// Places type `t`'s part of the integer answer `x` on GPUs: y_m copies of
// each multiset's layout, each service filling z_jp instances of profile p
// in GPU order.
std::vector<deployment::GpuConfig> PlaceMigColumns(const MigColumns& t,
                                                   const double* x);

// The cost of `configs` (per type), and of the model's solution `x`.
double FleetCost(
    const MigModel& model,
    const std::vector<std::vector<deployment::GpuConfig>>& configs);
double Objective(const MigModel& model, const std::vector<double>& x);

// A feasible start that costs nothing to find: each service on GPUs of its
// own, all of one multiset, the one (of any type) that serves it at the
// lowest cost per unit of its demand. Returns the solution, or nothing if a
// service runs nowhere.
std::optional<std::vector<double>> OneServiceGpus(
    const MigModel& model, const std::vector<ServiceColumns>& services);

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_MIG_MODEL_H_
