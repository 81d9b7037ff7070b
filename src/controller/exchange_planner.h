// The exchange-and-compact planner's working state (planner.h says what
// it plans; paper 6): the cluster as it will be once every action emitted
// so far has run, each service's slack above what it must keep in every
// view (the plain one and, with survive, one per failure domain), and the
// actions emitted. exchange_books.cc keeps the books (floors, slack,
// dependencies, emission); exchange_phases.cc runs the phases (prepare
// layouts, fill slots, delete the unneeded, make room, final layouts).
// Internal to the controller: PlanTransition is its interface.
#ifndef MIGSERVE_CONTROLLER_EXCHANGE_PLANNER_H_
#define MIGSERVE_CONTROLLER_EXCHANGE_PLANNER_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/action.h"
#include "cluster/cluster_state.h"
#include "controller/planner.h"
#include "controller/target_mapping.h"
#include "util/status_or.h"
#include "util/tolerance.h"

namespace migserve::controller::exchange {

using cluster::Action;
using cluster::ActionKind;
using cluster::ClusterState;
using cluster::GpuId;
using cluster::GpuState;
using cluster::InstanceRef;
using cluster::Replica;
using cluster::Slot;
using cluster::TransitionPlan;

inline constexpr double kEpsilon = kCapacityTolerance;

class Planner {
 public:
  Planner(const ClusterState& current, DesiredLayouts desired,
          const TransitionGoal& goal, const PlannerOptions& options)
      : state_(current),
        desired_(std::move(desired)),
        goal_(goal),
        options_(options) {}

  StatusOr<TransitionPlan> Run();

 private:
  const mig::GpuModel& Model(const GpuId& g) const {
    return *state_.FindGpu(g)->model;
  }
  InstanceRef Ref(const GpuId& g, const mig::Instance& instance) const {
    return {g, &Model(g), instance};
  }
  const Slot* DesiredSlot(const GpuId& g, const mig::Instance& instance) const;
  // True if `slot` of GPU `g` holds the replica the target wants there.
  bool Wanted(const GpuId& g, const Slot& slot) const;
  bool Needed(const GpuId& g, const Slot& desired) const;
  bool Done() const;

  // What a service must keep as seen by one view of the cluster: first the
  // plain view (every GPU; its floor) and, with survive, second the view
  // for the domains it has not touched (every GPU; what it keeps after a
  // loss), which a new domain's view starts from, then one per failure
  // domain it touches (every GPU outside it; the same).
  struct View {
    std::optional<std::string> excluded;  // the domain left out
    // The view's capacity, once every emitted action has run, above what
    // it must keep, less what deletes have taken from it.
    double slack = 0;
    // Creates seen by the view with gain not yet promised to a delete.
    std::vector<std::pair<int, double>> unpaired;
  };

  // The domain of GPU `g` under the goal's survive.
  std::string Domain(const GpuId& g) const {
    return DomainOf(g, goal_.survive->domain);
  }
  // The domain of GPU `g` where `views` tell domains apart, else "".
  std::string DomainIn(const std::vector<View>& views, const GpuId& g) const {
    return views.size() > 1 ? Domain(g) : std::string();
  }
  // True if `view` sees a change in `domain`.
  static bool Sees(const View& view, const std::string& domain) {
    return !view.excluded || *view.excluded != domain;
  }
  // Takes `throughput` of `service`, lost on GPU `g`, from every view that
  // sees it: first its slack, then creates not yet paired (their ids go to
  // `after`). Returns false, taking nothing, if a view has not enough.
  bool Cover(const std::string& service, double throughput, const GpuId& g,
             std::vector<int>* after);
  bool CanCover(const std::string& service, double throughput,
                const GpuId& g) const;
  // Starts the views of `service` (its slack from `capacity` in the
  // cluster and `by_domain` per domain) when it keeps `kept` after a loss.
  void StartViews(const std::string& service, double capacity,
                  const std::map<std::string, double>& by_domain, double kept);
  // True if `service` has a replica in the failure domain of GPU `g`.
  bool InDomain(const std::string& service, const GpuState& g) const;

  std::vector<int> TouchDeps(const InstanceRef& ref) const;
  void Touch(const InstanceRef& ref, int id) { last_touch_[Key(ref)] = id; }
  static std::pair<GpuId, mig::Instance> Key(const InstanceRef& ref) {
    return {ref.gpu, ref.instance};
  }
  int Emit(Action action);
  // Emits a repartition of GPU `g` unless the result would be illegal.
  bool Repartition(const GpuId& g, std::vector<mig::Instance> remove,
                   std::vector<mig::Instance> add);

  // Returns the instances of `g` that share memory with any of `adding`.
  std::vector<mig::Instance> Overlapping(
      const GpuState& g, const std::vector<mig::Instance>& adding) const;
  // Returns the best unneeded replica to migrate into target slot `d` of
  // GPU `g` (same size, batch and processes; same GPU, then same node), or
  // nullopt.
  std::optional<InstanceRef> MigrationSource(const GpuId& g,
                                             const Slot& d) const;

  bool PrepareLayouts();
  bool FillSlots();
  bool DeleteUnneeded();
  // Creates a temporary replica for a service whose replica blocks a target
  // instance. Returns false and names the service if there is no room.
  bool MakeRoom(std::string* short_service);
  // Returns where a replica of `profile` of `model` could go for a while (a
  // GPU of that model), or nullopt.
  std::optional<InstanceRef> FindRoom(const mig::GpuModel& model, int profile,
                                      const std::string& node,
                                      const std::string& service);
  void FinalLayouts();

  ClusterState state_;  // the cluster once every emitted action has run
  DesiredLayouts desired_;
  const TransitionGoal& goal_;
  PlannerOptions options_;
  TransitionPlan plan_;
  Status error_;
  std::map<std::pair<GpuId, mig::Instance>, int> last_touch_;
  std::map<GpuId, int> last_repartition_;
  // Per service: its views, the plain one first.
  std::map<std::string, std::vector<View>> views_;
};

}  // namespace migserve::controller::exchange

#endif  // MIGSERVE_CONTROLLER_EXCHANGE_PLANNER_H_
