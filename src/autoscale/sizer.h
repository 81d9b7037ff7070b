// What a move of the autoscaler is optimized with (replay and autoscale
// alike): the workload's services at new rates, from the cluster as it is
// through the transition-aware milp (`optimize --from`), or from nothing.
#ifndef MIGSERVE_AUTOSCALE_SIZER_H_
#define MIGSERVE_AUTOSCALE_SIZER_H_

#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "deployment/deployment.h"
#include "mig/gpu_model.h"
#include "optimizer/options.h"
#include "profile/profile_table.h"
#include "util/status_or.h"
#include "workload/capacity_matrix.h"
#include "workload/workload.h"

namespace migserve::autoscale {

struct SizerOptions {
  optimizer::SolveOptions solve;  // of a plain milp run ...
  // ... but a move's (`optimize --from`): its work limit, CBC nodes (the
  // same trace gives the same moves on any machine), and its time limit,
  // a safety net.
  int move_nodes = 2000;
  double move_time_limit_s = 10;
  int gpus_per_node = 8;
  // Per service: the rates a move goes to when what it asks for does not
  // fit the budget (replay: the trace's peaks, which the static
  // provisioning the budget defaults to serves); empty: none.
  std::vector<double> ceiling;
  // With a ceiling, a move whose target would use more than this share of
  // the budget goes to the ceiling instead, where that fits.
  double ceiling_above = 0.9;
};

class Sizer {
 public:
  // Returns InvalidArgument for a workload of more than one GPU type, or
  // of a GPU the catalog lacks; `workload` and `profiles` outlive it.
  static StatusOr<Sizer> Make(const workload::Workload& workload,
                              const profile::ProfileTable& profiles,
                              const SizerOptions& options);

  // The fewest GPUs for the workload's services (in its order) at `rates`:
  // from `current` (the transition-aware milp) when given, else from
  // nothing. Returns FailedPrecondition when no deployment is found, or
  // when the lower bound exceeds the solve options' max_gpus (no search
  // is started for rates that need a million GPUs).
  StatusOr<deployment::Deployment> Deploy(
      const std::vector<double>& rates,
      const cluster::ClusterState* current) const;

  // A move's target from `current` within `max_gpus` GPUs (0: the solve
  // options' max_gpus) for `rates`; where those need more, or more than
  // ceiling_above of them, the ceiling's if it fits (`at_ceiling`: the
  // cluster is there already; `over` says it is held there); else in
  // `over` why the move would need more (a rate past the most a rate may
  // be; the rates' lower bound, known before any search; or the GPUs its
  // transition holds, controller::GpusHeld). The
  // target is placed to hold as few GPUs as the budget needs.
  struct Move {
    deployment::Deployment target;
    std::vector<double> rates;  // what the target is sized for
    std::string over;           // "" : within
    bool to_ceiling = false;    // rates are the ceiling's
  };
  StatusOr<Move> DeployWithin(const std::vector<double>& rates,
                              const cluster::ClusterState& current,
                              int max_gpus, bool at_ceiling) const;
  const std::vector<double>& ceiling() const { return options_.ceiling; }

 private:
  // The workload at `rates`, its capacity matrix and the fewest GPUs it can
  // need (the relaxed bound): built once for a move's checks and search.
  struct Sized {
    workload::Workload workload;
    workload::CapacityMatrix caps;
    int needs = 0;
  };
  StatusOr<Sized> Size(const std::vector<double>& rates) const;
  // Deploy's search on `sized` with `solve`, refused past its max_gpus;
  // from `current`, placed to hold at most `max_gpus_held` GPUs while the
  // move runs where it can (0: no limit).
  StatusOr<deployment::Deployment> Solve(const Sized& sized,
                                         const cluster::ClusterState* current,
                                         const optimizer::SolveOptions& solve,
                                         int max_gpus_held) const;
  // The solve options of a move: the plain ones within the move's limits.
  optimizer::SolveOptions MoveOptions() const;

  Sizer(const workload::Workload& workload,
        const profile::ProfileTable& profiles, const mig::GpuModel& gpu,
        const SizerOptions& options)
      : workload_(&workload),
        profiles_(&profiles),
        gpu_(&gpu),
        options_(options) {}

  const workload::Workload* workload_;
  const profile::ProfileTable* profiles_;
  const mig::GpuModel* gpu_;
  SizerOptions options_;
};

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_SIZER_H_
