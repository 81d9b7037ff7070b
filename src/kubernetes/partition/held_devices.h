// The GPUs of migserve's DRA nodes on which a claim migserve does not own
// holds a device the controller planned (issue 91): each is taken out of the
// plans (GpuLayout::held_by) from the moment a repartition there gives up on
// the device until that claim lets it go, found by listing every namespace's
// claims, at most once per `recheck_s` while some GPU is held.
#ifndef MIGSERVE_KUBERNETES_PARTITION_HELD_DEVICES_H_
#define MIGSERVE_KUBERNETES_PARTITION_HELD_DEVICES_H_

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

class HeldDevices {
 public:
  // Whether claim `name` of namespace `namespace_` is the controller's own.
  using Own = std::function<bool(const std::string& namespace_,
                                 const std::string& name)>;

  // `client` is not owned and outlives this.
  HeldDevices(kube::KubeClient* client, Own own, double recheck_s);

  // The claim ("NAMESPACE/NAME", in any namespace) allocated `device` of
  // node `node`'s pool that is not the controller's own; "" if none is, or
  // if the claims cannot be listed.
  std::string HolderOf(const std::string& node,
                       const std::string& device) const;
  // GPU `gpu` is left out of the plans: its `device` is held by `holder`.
  void Hold(const GpuId& gpu, const std::string& device,
            const std::string& holder);
  // The claim holding a device of `gpu` ("" if none is known to).
  std::string Holder(const GpuId& gpu) const;
  // Looks again, once `recheck_s` has passed since the last look, whether
  // each held device is still held; returns the nodes of the GPUs that
  // are held no more (or by another claim), and of those held since the
  // last call.
  std::set<std::string> Recheck();

 private:
  // HolderOf, or why the claims could not be listed (a held GPU stays held
  // until a listing says otherwise).
  StatusOr<std::string> Find(const std::string& node,
                             const std::string& device) const;

  struct Held {
    std::string device;
    std::string holder;
  };
  kube::KubeClient* client_;
  Own own_;
  std::chrono::steady_clock::duration recheck_;
  std::chrono::steady_clock::time_point looked_;
  std::map<GpuId, Held> held_;
  std::set<std::string> changed_;  // nodes, since the last Recheck
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_HELD_DEVICES_H_
