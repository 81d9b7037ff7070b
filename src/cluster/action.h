// TransitionPlan: a DAG of the paper's four actions (paper 6, DESIGN 6).
#ifndef MIGSERVE_CLUSTER_ACTION_H_
#define MIGSERVE_CLUSTER_ACTION_H_

#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_state.h"
#include "mig/layout.h"

namespace migserve::cluster {

enum class ActionKind { kCreate, kDelete, kMigrate, kRepartition };
inline constexpr ActionKind kActionKinds[] = {
    ActionKind::kCreate, ActionKind::kDelete, ActionKind::kMigrate,
    ActionKind::kRepartition};

// Returns "create", "delete", "migrate" or "repartition".
std::string_view KindName(ActionKind kind);

// One instance of one GPU, with the GPU's model (its profiles name the
// instance's profile index), so that a plan can be read on its own.
struct InstanceRef {
  GpuId gpu;
  const mig::GpuModel* model = nullptr;
  mig::Instance instance;
  bool operator==(const InstanceRef&) const = default;

  // Returns "node/index 3g.40gb@4".
  std::string ToString() const;
};

struct Action {
  int id = 0;
  ActionKind kind = ActionKind::kCreate;
  std::vector<int> after;  // ids that must finish before this one starts

  // create, delete: the instance; migrate: the source.
  InstanceRef at;
  // migrate: the destination.
  InstanceRef to;
  // create, delete, migrate: the replica started, stopped or moved.
  Replica replica;
  // repartition (on at.gpu, of model at.model): instances destroyed, then
  // created.
  std::vector<mig::Instance> remove;
  std::vector<mig::Instance> add;

  // Returns the throughput this action takes away from its service when it
  // starts (delete, migrate) and gives when it finishes (create, migrate).
  double LossAtStart() const;
  double GainAtFinish() const;
  // Returns the GPU GainAtFinish adds to (migrate: the destination; the
  // loss is always at.gpu's).
  const GpuId& GainGpu() const {
    return kind == ActionKind::kMigrate ? to.gpu : at.gpu;
  }
};

struct TransitionPlan {
  // Unique ids; `after` names only actions listed earlier.
  std::vector<Action> actions;
};

// The stage of each action (by position in plan.actions): 0 for an action
// that depends on nothing, else one more than the latest stage it waits
// for. The actions of a stage can start together once the earlier stages
// are done; the stage count is the plan's longest chain.
std::vector<int> Stages(const TransitionPlan& plan);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_ACTION_H_
