// The controller's target as a custom resource, a ServingTarget
// (migserve.io/v1alpha1, deploy/base/crd.yaml), read and written as text as
// ConfigMapKey reads a key: its spec is the deployment JSON (what
// `controller --target-resource` follows and `autoscale --target-resource`
// moves), and an annotation of it may keep text beside it (the
// autoscaler's state) without changing its generation. A spec write
// applies only if the object is still the version last read (409 from the
// API server: Aborted).
#ifndef MIGSERVE_KUBE_SERVING_TARGET_H_
#define MIGSERVE_KUBE_SERVING_TARGET_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kube/kube_client.h"
#include "kube/labels.h"
#include "util/status_or.h"

namespace migserve::kube {

inline constexpr char kServingTargetApiVersion[] = "migserve.io/v1alpha1";
inline constexpr char kServingTargetKind[] = "ServingTarget";

// The ServingTargets of `namespace_`, and one of them.
std::string ServingTargetsPath(const std::string& namespace_);
std::string ServingTargetPath(const std::string& namespace_,
                              const std::string& name);

// The ServingTarget `name` in `namespace_` whose spec is `deployment` (a
// deployment JSON object).
nlohmann::json ServingTargetObject(const std::string& namespace_,
                                   const std::string& name,
                                   nlohmann::json deployment);

// The RFC 7386 merge patch that turns `from` into `to` (a key `to` lacks is
// set to null; objects are patched key by key, anything else replaced).
nlohmann::json MergePatchBetween(const nlohmann::json& from,
                                 const nlohmann::json& to);

class ServingTargetText {
 public:
  // `client` is not owned and outlives this. Without `annotation` the
  // text is the spec; else that annotation's value.
  ServingTargetText(KubeClient* client, std::string namespace_,
                    std::string name,
                    std::optional<LabelKey> annotation = std::nullopt);

  // "servingtarget NAMESPACE/NAME" (with " annotation KEY"), for messages.
  std::string Describe() const;

  // The spec as JSON text, or the annotation's; InvalidArgument
  // "<Describe()>: missing" without one.
  StatusOr<std::string> Read();
  // Writes `text` (a JSON object for the spec) if the object is as last
  // read (Aborted if it changed; FailedPrecondition, writing nothing, if
  // it was read without a resourceVersion or not read).
  Status Write(const std::string& text);
  // Writes `text` whatever the object's version: for an annotation only
  // this writer writes.
  Status Put(const std::string& text);

 private:
  Status Patch(const std::string& text, bool checked);

  KubeClient* client_;
  std::string namespace_name_;
  std::string name_;
  std::string annotation_;  // its key, or "": the spec
  std::string version_;
  nlohmann::json spec_;  // as last read or written
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_SERVING_TARGET_H_
