// The intent as a custom resource, a ServingWorkload (migserve.io/v1alpha1,
// deploy/base/crd.yaml): its spec is the workload document (docs/formats.md,
// "Workload YAML": services, SLOs, rates, kinds) that `autoscale
// --workload-resource` follows, and its metadata.generation says which
// version a target was made from.
#ifndef MIGSERVE_KUBE_SERVING_WORKLOAD_H_
#define MIGSERVE_KUBE_SERVING_WORKLOAD_H_

#include <string>

#include "kube/kube_client.h"
#include "util/status_or.h"

namespace migserve::kube {

inline constexpr char kServingWorkloadKind[] = "ServingWorkload";

// The ServingWorkloads of `namespace_`, and one of them.
std::string ServingWorkloadsPath(const std::string& namespace_);
std::string ServingWorkloadPath(const std::string& namespace_,
                                const std::string& name);

// One read of a ServingWorkload: its spec as block YAML (what the workload
// parser reads; an error's line is the spec's line there, its field path
// the spec's) and its generation.
struct ServingWorkloadSpec {
  std::string yaml;
  long long generation = 0;
};

class ServingWorkloadText {
 public:
  // `client` is not owned and outlives this.
  ServingWorkloadText(KubeClient* client, std::string namespace_,
                      std::string name);

  // "servingworkload NAMESPACE/NAME", for messages.
  std::string Describe() const;
  // "NAMESPACE/NAME": a deployment's summary.workload.name.
  std::string Name() const;

  // The spec and generation; InvalidArgument "<Describe()>: ..." without a
  // spec object or a positive metadata.generation.
  StatusOr<ServingWorkloadSpec> Read();

 private:
  KubeClient* client_;
  std::string namespace_name_;
  std::string name_;
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_SERVING_WORKLOAD_H_
