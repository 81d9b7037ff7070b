// Kubernetes DRA's partition driver (docs/kubernetes.md, "The controller on
// DRA"): GPUs partitioned by NVIDIA's DRA driver under DynamicMIG, which
// creates a MIG instance when a pod's claim for it is prepared and destroys
// it when the claim goes. A planned instance is a ResourceClaim pinned to
// its profile and GPU (dra_objects.h), named after its place, held by a
// pause pod so that the scheduler allocates it; the replicas placed on the
// instance share that claim (ReplicaDevice). A node's GPUs are the whole
// GPUs its ResourceSlices list (their models by product name); their
// layouts, the devices the controller's claims on the node are allocated.
//
// A change deletes the claims (and holding pods) of the instances it
// removes; once they are gone, it creates the added instances' claims in
// dra::ClaimInstances' order, with holding claims where first-fit would
// put an instance below its planned start, each step once the one before
// has ended: a claim once allocated exactly its planned device (an
// instance's once its pod runs too), a released hold once gone. A claim
// that gets another device (someone else's claim took the planned one) is
// undone and made again with backoff, each time said through `progress`
// naming the claim that holds the planned device (in any namespace: issue
// 91); once the attempts are spent the change fails, naming both devices
// and that claim, with nothing of it left allocated elsewhere, and the GPU
// is left out of the plans while that claim holds the device
// (held_devices.h). Only the claims this driver labels count: nodes migserve
// partitions this way are migserve's alone, as with the agent.
#ifndef MIGSERVE_KUBERNETES_PARTITION_DRA_DRIVER_H_
#define MIGSERVE_KUBERNETES_PARTITION_DRA_DRIVER_H_

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dra/claim_order.h"
#include "kube/informer.h"
#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/dra_slices.h"
#include "kubernetes/partition/held_devices.h"
#include "kubernetes/partition/partition_driver.h"
#include "mig/gpu_catalog.h"
#include "util/event.h"
#include "util/log_sink.h"
#include "util/mutex.h"

namespace migserve::kubernetes {

struct DraDriverOptions {
  // Where the claims and their pods live: the replicas' namespace (a claim
  // is shared only by pods of its namespace).
  std::string namespace_ = "default";
  int watch_s = 300;  // seconds a watch lasts before it is renewed
  // Where the slices' product names are looked up (not owned); null: the
  // default catalog.
  const mig::GpuCatalog* catalog = nullptr;
  // A claim allocated another device than planned is undone (deleted with
  // its pod) and made again once it is gone and `retry_s` has passed,
  // doubling each time, up to `claim_attempts` in all; then the change
  // fails naming both devices.
  int claim_attempts = 4;
  double retry_s = 1;
  LogSink progress;  // hears each undo and retry; may be empty
  // Told the same as a Warning "ClaimMisplaced" (a Kubernetes Event in the
  // controller command); may be empty.
  EventSink event;
  // A GPU whose planned device a claim not migserve's holds once the
  // attempts are spent is left out of the plans (GpuLayout::held_by); every
  // namespace's claims are listed this often, while one is, to see whether
  // it is still held.
  double held_recheck_s = 10;
};

class DraDriver : public PartitionDriver {
 public:
  // `client` is not owned and outlives the driver.
  DraDriver(kube::KubeClient* client, DraDriverOptions options);

  void OnChange(std::function<void()> changed) override;
  StatusOr<std::set<std::string>> Sync() override;
  StatusOr<std::vector<GpuLayout>> Layouts(
      const std::string& name, const nlohmann::json& node) const override;
  StatusOr<std::string> Start(const GpuId& gpu, const mig::GpuModel& model,
                              const mig::Reconfiguration& change) override;
  StatusOr<std::optional<Status>> Check(const GpuId& gpu,
                                        const std::string& ticket,
                                        const nlohmann::json& node) override;
  PodDevice ReplicaDevice(const InstanceRef& at) const override;

  // The claim of planned instance `at` (and the pod that holds it).
  static std::string ClaimName(const InstanceRef& at);

 private:
  struct Change {
    GpuId gpu;
    const mig::GpuModel* model = nullptr;
    std::string uuid;  // the GPU's, which every claim pins
    mig::Reconfiguration change;
    bool planned = false;  // the removed claims are gone; steps known
    std::vector<dra::ClaimStep> steps;
    size_t next = 0;      // the step under way
    bool issued = false;  // its objects are created (or deleted)
    // Of the step under way: its claim's attempts undone so far, and when
    // the next may be made.
    int undone = 0;
    std::chrono::steady_clock::time_point retry_at;
  };

  // The claim (and pod) of `step` of a change of `gpu`.
  static std::string StepName(const GpuId& gpu, const mig::GpuModel& model,
                              const dra::ClaimStep& step);
  // Deletes the holding pod and claim `name` (gone already: fine).
  Status DeleteClaim(const std::string& name);
  // The instances the controller's claims hold on GPU `gpu` now, by claim.
  std::map<std::string, mig::Instance> Allocated(
      const GpuId& gpu, const mig::GpuModel& model) const;
  // Once the claims `c` removes (and any hold left on its GPU) are gone,
  // sets its steps; false while they are not gone.
  StatusOr<bool> Plan(Change* c) const;
  // Creates (or, for a release, deletes) the objects of `c`'s next step.
  Status Issue(const Change& c, const dra::ClaimStep& step);
  // Whether `c`'s step `step` has ended (its claim allocated the planned
  // device, an instance's pod Ready; a release's claim gone).
  StatusOr<bool> Ended(const Change& c, const dra::ClaimStep& step) const;
  // A claim allocated another device than planned.
  struct Misplacement {
    std::string why;      // for the log, the Event and the failure
    std::string planned;  // the device planned
    std::string holder;   // the claim holding it, not ours; "" if unknown
  };
  // Whether the claim of `step` is allocated another device than planned,
  // naming the claim that holds the planned one where it is not the
  // controller's; nullopt when it is not (or not allocated yet).
  std::optional<Misplacement> Misplaced(const Change& c,
                                        const dra::ClaimStep& step) const;
  // Undoes the misplaced claim of `c`'s step under way (`m`) and sets the
  // retry, or returns the failure once the attempts are spent (leaving the
  // GPU out of the plans where `m` names who holds the device).
  std::optional<Status> Undo(Change* c, const Misplacement& m);
  // Takes `c`'s steps as far as they have ended.
  std::optional<Status> Advance(Change* c);
  void Notify();

  kube::KubeClient* client_;
  DraDriverOptions options_;
  Mutex mu_;
  std::function<void()> changed_ GUARDED_BY(mu_);
  kube::Informer slices_;
  kube::Informer claims_;
  kube::Informer pods_;  // the claims' holding pods
  // As of the last Sync: the driver's GPUs; the controller's claims by name,
  // and their names by node; the node of each slice, claim and pod seen
  // ("slice/", "claim/", "pod/" and its name).
  SliceGpus gpus_;
  Status slices_read_;  // of the last reading of the slices
  std::map<std::string, nlohmann::json> claim_objects_;
  std::map<std::string, std::set<std::string>> claims_by_node_;
  std::map<std::string, std::string> node_of_;
  std::map<std::string, Change> changes_;  // by ticket
  HeldDevices held_;  // GPUs left out of the plans, by claims not ours
  int tickets_ = 0;
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_DRA_DRIVER_H_
