// One key of one ConfigMap, read and written as text (the target
// deployment of `controller --target-configmap` and `autoscale
// --target-configmap`). A write applies only if the ConfigMap is still the
// version last read: a merge patch carrying its resourceVersion, which the
// API server refuses (409, Aborted) if someone wrote in between; a key only
// one writer writes is put without that check.
#ifndef MIGSERVE_KUBE_CONFIGMAP_KEY_H_
#define MIGSERVE_KUBE_CONFIGMAP_KEY_H_

#include <string>

#include "kube/kube_client.h"
#include "util/status_or.h"

namespace migserve::kube {

class ConfigMapKey {
 public:
  // `client` is not owned and outlives the key.
  ConfigMapKey(KubeClient* client, std::string namespace_, std::string name,
               std::string key);

  // "configmap NAMESPACE/NAME key KEY", for messages.
  std::string Describe() const;

  // The key's text; InvalidArgument "<Describe()>: missing" if the
  // ConfigMap has no such key; the client's error if it cannot be read.
  StatusOr<std::string> Read();
  // The resourceVersion of the last Read ("" before one).
  const std::string& version() const { return version_; }

  // Writes `text` under the key if the ConfigMap is as last read (Aborted
  // if it changed; FailedPrecondition, writing nothing, if it was read
  // without a resourceVersion or not read); then that write is what was
  // last read.
  Status Write(const std::string& text);
  // Writes `text` under the key whatever the ConfigMap's version: for a key
  // only this writer writes (the merge patch leaves the other keys as they
  // are, whoever wrote them).
  Status Put(const std::string& text);

 private:
  std::string Path() const;
  // The merge patch of the key, carrying `version` unless it is "".
  Status Patch(const std::string& text, const std::string& version);

  KubeClient* client_;
  std::string namespace_name_;
  std::string name_;
  std::string key_;
  std::string version_;
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_CONFIGMAP_KEY_H_
