// The simulated cluster: a deterministic ClusterBackend on a virtual clock.
// Independent actions run in parallel; every change of capacity is recorded
// so a report can show each service's lowest satisfaction over time. Faults
// can be injected: an action that fails, a GPU lost at some moment, a GPU
// held by someone else.
#ifndef MIGSERVE_CLUSTER_SIMULATED_CLUSTER_H_
#define MIGSERVE_CLUSTER_SIMULATED_CLUSTER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster/capacity_books.h"
#include "cluster/cluster_backend.h"

namespace migserve::cluster {

// Seconds per action. Defaults (see docs/controller.md for sources): a
// replica's create is dominated by the pod start and model load that the
// paper found to be most of a transition (fig:e2estack); a partial
// repartition through NVML takes seconds, unlike a whole-GPU mig-parted
// re-configuration (about 113 s, with the GPU drained).
// The longest simulated action: a day (a longer one is a typo, and an
// infinite one would never end the run).
inline constexpr double kMaxActionSeconds = 86400;

struct ActionDurations {
  double create_s = 30;
  double delete_s = 5;
  double local_migrate_s = 35;
  double remote_migrate_s = 45;
  double repartition_s = 8;
  // Through Kubernetes DRA (docs/kubernetes.md, "The controller on DRA"):
  // a repartition is its claims, one after another, each an instance
  // created by the driver plus its holding pod's start; it takes this many
  // seconds per instance it adds (and repartition_s where it adds none).
  // 0: repartition_s per repartition, as the node agent does it.
  double claim_s = 0;
  double jitter = 0.2;  // each duration is scaled by 1 + U(-jitter, jitter)

  // Returns InvalidArgument unless every duration is in (0,
  // kMaxActionSeconds] (claim_s: 0 too) and 0 <= jitter < 1.
  Status Validate() const;
};

struct Faults {
  int fail_action = -1;           // the action with this id fails when it ends
  std::optional<GpuId> lose_gpu;  // this GPU disappears ...
  std::optional<std::string> lose_node = std::nullopt;  // or this node ...
  double lose_at_s = -1;  // ... at this moment of the virtual clock
};

// When a migrating replica stops serving at its source: at the migrate's
// start (the safety checker's model: counted nowhere while it moves), or
// once the destination is ready, as the Kubernetes backend does it (its
// source pod is deleted then, a write the removal guard is asked about).
enum class MigrateSource { kGoneAtStart, kGoneWhenReady };

// One action as it ran.
struct TimelineEntry {
  Action action;      // what ran
  bool local = true;  // migrate within one node
  double start_s = 0;
  double end_s = 0;
  bool ok = true;
};

// Every service's ready capacity (requests/s) from `time_s` on, until the
// next sample.
struct CapacitySample {
  double time_s = 0;
  std::map<std::string, double> capacity;
};

class SimulatedCluster : public ClusterBackend {
 public:
  explicit SimulatedCluster(ClusterState initial,
                            ActionDurations durations = {}, uint64_t seed = 1,
                            Faults faults = {});

  StatusOr<ClusterState> Observe() override { return state_; }
  std::optional<LiveView> Live() override {
    return LiveView{&state_, &books_.capacity(), gpus_version_};
  }
  Status Start(const Action& action) override;
  std::vector<int> Running() const override;
  StatusOr<ActionResult> WaitAny() override;
  void SetRemovalGuard(RemovalGuard guard) override {
    guard_ = std::move(guard);
  }

  void set_migrate_source(MigrateSource source) { migrate_source_ = source; }
  const ClusterState& state() const { return state_; }
  // Inject: the replica on `instance` of GPU `gpu` goes away (an eviction,
  // a crash) at the current moment; the instance stays. Returns NotFound
  // if no replica is there.
  Status EvictReplica(const GpuId& gpu, const mig::Instance& instance);
  // Inject: node `node` and its GPUs go away at the current moment.
  void LoseNode(const std::string& node);
  // Inject: someone else holds a device of GPU `gpu` from now on (a DRA
  // claim not migserve's, docs/kubernetes.md "The controller on DRA"): the
  // GPU says so (GpuState::held_by = `holder`), and a repartition of it
  // that adds an instance fails when it ends, its layout as it was.
  void HoldGpu(const GpuId& gpu, const std::string& holder);
  // Inject: `gpus` join the cluster (a lost node comes back) at the
  // current moment.
  void AddGpus(const std::vector<GpuState>& gpus);
  double now_s() const { return now_s_; }
  const std::vector<TimelineEntry>& timeline() const { return timeline_; }
  // Per service: the lowest capacity it had at any moment.
  const std::map<std::string, double>& min_capacity() const {
    return min_capacity_;
  }
  // Capacities at the start, then after every change (the changes of one
  // moment as one sample), in time order.
  const std::vector<CapacitySample>& capacity_history() const {
    return capacity_history_;
  }
  // The most GPUs that served a replica or ran an action at one moment.
  int peak_gpus() const { return peak_gpus_; }
  // How many times each action id was started.
  const std::map<int, int>& starts() const { return starts_; }

 private:
  struct InFlight {
    Action action;
    size_t entry;  // in timeline_
  };
  double Duration(const Action& action, bool local);
  // Records the capacities and busy GPUs after a change (Touch, or Rebuild
  // after one that may reach every GPU).
  void Record();
  void LoseGpu();
  // After GPUs left or joined: a new gpus_version_, the books from scratch,
  // the capacities recorded.
  void GpusChanged();
  // The removal guard's answer about `a` taking its replica away now.
  Status Guard(const Action& a) const;
  // Brings the per-GPU books in line with GPU `id` as state_ now has it,
  // and the capacity of each service it serves or served: the work of an
  // action event is that of its GPUs and their services, not the cluster's.
  void Touch(const GpuId& id);
  // Counts GPU `id` busy if it serves a replica or runs an action.
  void MarkBusy(const GpuId& id);
  // The GPUs an action's start or end changes, counted as busy meanwhile.
  std::vector<GpuId> GpusOf(const Action& action) const;
  // The books from scratch.
  void Rebuild();

  ClusterState state_;
  ActionDurations durations_;
  std::mt19937_64 rng_;
  Faults faults_;
  MigrateSource migrate_source_ = MigrateSource::kGoneAtStart;
  RemovalGuard guard_;
  double now_s_ = 0;
  // By end time, then id: the next to end first.
  std::multimap<std::pair<double, int>, InFlight> running_;
  std::vector<TimelineEntry> timeline_;
  std::map<std::string, double> min_capacity_;
  std::vector<CapacitySample> capacity_history_;
  std::map<int, int> starts_;
  int peak_gpus_ = 0;
  CapacityBooks books_;
  // The last sample's capacities, and the services touched since.
  std::map<std::string, double> capacity_now_;
  std::set<std::string> changed_;
  std::map<GpuId, int> acting_;  // running actions per GPU
  std::set<GpuId> busy_;         // serving a replica or running an action
  int gpus_version_ = 0;         // GPUs lost or added
};

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_SIMULATED_CLUSTER_H_
