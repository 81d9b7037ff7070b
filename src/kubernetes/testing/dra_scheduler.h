// Plays NVIDIA's DRA driver (DynamicMIG) and the Kubernetes scheduler's
// DRA allocation on a stand-in API server, for tests: it publishes each
// node's ResourceSlices as the driver does (one per GPU: the whole GPU
// with its UUID, then every MIG device by name, consuming its memory
// slices), and when a pod that uses ResourceClaims appears it allocates
// each claim not yet allocated first-fit (dra/first_fit.h) on the pod's
// node, writing status.allocation as the scheduler does. Claims are read
// as strictly as the API server and the CEL of a real one would: the
// device class must be mig.nvidia.com, one request of one device, and the
// selectors a conjunction of `device.attributes['gpu.nvidia.com'].profile
// == '...'` and `.parentUUID == '...'`; anything else leaves the pod
// unschedulable with the reason, as does a claim no device fits. A
// deleted claim frees its device.
#ifndef MIGSERVE_KUBERNETES_TESTING_DRA_SCHEDULER_H_
#define MIGSERVE_KUBERNETES_TESTING_DRA_SCHEDULER_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dra/first_fit.h"
#include "kube/testing/api_server_standin.h"
#include "kubernetes/cluster_model.h"
#include "mig/gpu_model.h"
#include "util/mutex.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

class DraScheduler {
 public:
  // `server` is not owned and outlives the scheduler, which must be the
  // last to change it. `gpus`: per node, its GPUs' model and count; GPU
  // minor m of node n has the UUID "GPU-<n>-<m>".
  DraScheduler(
      kube::ApiServerStandIn* server,
      const std::map<std::string, std::pair<const mig::GpuModel*, int>>& gpus);

  // The ResourceSliceList the driver published (`kubectl get
  // resourceslices -o json`).
  nlohmann::json Slices() const;
  // Why the pods that could not be scheduled were not ("pod: reason").
  std::vector<std::string> Unschedulable() const;
  // The devices allocated on GPU `minor` of `node` (none on a node
  // without GPUs).
  mig::Layout Layout(const std::string& node, int minor) const;

 private:
  struct Claimed {
    std::string node;
    dra::Allocation allocation;
  };

  void OnChange(const std::string& type, const std::string& path,
                const nlohmann::json& object);
  // Allocates claim `path` for a pod on `node`; an error says why not.
  Status Allocate(const std::string& path, const std::string& node);

  kube::ApiServerStandIn* server_;
  mutable Mutex mu_;
  std::map<std::string, dra::FirstFitNode> nodes_ GUARDED_BY(mu_);
  std::map<std::string, Claimed> claimed_ GUARDED_BY(mu_);  // by claim path
  std::vector<std::string> unschedulable_ GUARDED_BY(mu_);
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_TESTING_DRA_SCHEDULER_H_
