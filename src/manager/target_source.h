// Where the controller reads its target deployment: a file, whose
// modification time tells a change, a ServingTarget custom resource
// (deploy/base/crd.yaml; its spec the deployment, a change a new
// metadata.generation) or, deprecated, a ConfigMap's key; the two
// Kubernetes ones followed by a watch-fed cache (asking whether the target
// changed costs no request).
#ifndef MIGSERVE_MANAGER_TARGET_SOURCE_H_
#define MIGSERVE_MANAGER_TARGET_SOURCE_H_

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "deployment/deployment.h"
#include "kube/configmap_key.h"
#include "kube/informer.h"
#include "kube/kube_client.h"
#include "profile/profile_table.h"
#include "util/status_or.h"

namespace migserve::manager {

struct TargetOptions {
  std::string file;                     // a deployment JSON file, or
  std::string resource;                 // a ServingTarget, or
  std::string configmap;                // a ConfigMap (deprecated)
  std::string key = "deployment.json";  // the ConfigMap's key
  double resync_s = 30;                 // the longest Wait
  double status_period_s = 1;           // a ServingTarget's status updates
  // When set, a target whose replica declares more throughput than its
  // profile row measured is refused, these rows named (the shipped ones
  // are asked either way: deployment::CheckDeclaredCredits).
  std::shared_ptr<const profile::ProfileTable> profiles;

  // InvalidArgument unless exactly one of file, resource and configmap is
  // given.
  Status Validate() const;
};

class TargetSource {
 public:
  // `client` is not owned and outlives the source.
  TargetSource(const TargetOptions& options, kube::KubeClient* client);

  // Returns the target now; InvalidArgument (naming the file, the
  // resource or the ConfigMap and key) if it cannot be read or parsed, or
  // if a replica declares more than `profiles` measured.
  StatusOr<deployment::Deployment> Load();

  // True if the target may have changed since the last Load: the file's
  // modification time, the resource's generation (a status write is no
  // change), or the ConfigMap's key (a write to another key of the same
  // ConfigMap, such as the autoscaler's state, is no change).
  bool Changed();

  // Returns when the target may have changed, `stop` turned true, or after
  // at most resync_s.
  void Wait(const std::atomic<bool>& stop);

  // The ServingTarget's path ("" unless the target is one) and the
  // generation of its spec the last Load read (0 before one).
  std::string ResourcePath() const;
  long generation() const { return generation_; }

 private:
  // The target as the file or the ConfigMap gives it.
  StatusOr<deployment::Deployment> Read();
  std::string Namespace() const;
  // The informer's collection and query: the ServingTargets or the
  // ConfigMaps, by name.
  std::string Collection() const;
  std::string Name() const;

  TargetOptions options_;
  kube::KubeClient* client_;
  kube::Informer watched_;  // the ServingTarget or the ConfigMap
  kube::ConfigMapKey key_;
  std::filesystem::file_time_type mtime_;
  std::string version_;  // of the ConfigMap as last loaded or compared
  long generation_ = 0;  // of the ServingTarget as last loaded
  std::string text_;     // the key's text as last loaded
};

}  // namespace migserve::manager

#endif  // MIGSERVE_MANAGER_TARGET_SOURCE_H_
