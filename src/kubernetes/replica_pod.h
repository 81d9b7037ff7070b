// What a replica looks like on Kubernetes, shared by `export` and the
// Kubernetes backend: its serving container (the serving spec's template
// with the replica contract), the labels that say where it is (service,
// node, GPU index on the node, profile, start) and which routing group it is
// in, the annotations that say what it serves, and the pod spec that pins it
// to its node and requests its MIG device.
#ifndef MIGSERVE_KUBERNETES_REPLICA_POD_H_
#define MIGSERVE_KUBERNETES_REPLICA_POD_H_

#include <nlohmann/json.hpp>
#include <string>

#include "boundary/checked_name.h"
#include "cluster/action.h"
#include "cluster/cluster_state.h"
#include "kube/labels.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/serving_spec.h"

namespace migserve::kubernetes {

using Json = nlohmann::ordered_json;

// Where a replica runs. `exact` is false for the device plugin flavour's
// Deployments, whose pods get any free instance of the profile on the node:
// their GPU index and start are then not part of the contract.
struct ReplicaPlace {
  InstanceRef at;
  bool exact = true;
};

// The replica contract (docs/serving.md): MIGSERVE_* environment variables
// naming the service, model, batch, MPS processes, profile, GPU model, node,
// GPU index and start (when exact), capacity, batch latency, routing group
// and port; for a model of the shipped LLM table also its engine's
// MIGSERVE_MAX_MODEL_LEN (from the service's token terms in `spec`) and
// MIGSERVE_KV_CACHE_DTYPE.
Json ReplicaContract(const Replica& replica, const std::string& model,
                     const ReplicaPlace& place, const ServingSpec& spec);

// What Pod Security "restricted" asks of every container, and all a model
// server or a claim's holder needs: no privilege escalation, no
// capability.
Json RestrictedContainerSecurity();

// The serving container of `replica` running `model`: its service's
// template from `spec`, the contract's variables before the template's own
// (so that the template may refer to them as $(MIGSERVE_BATCH)), and
// `device` (the MIG device request) added to the template's resources.
Json ServerContainer(const Replica& replica, const std::string& model,
                     const ReplicaPlace& place, const ServingSpec& spec,
                     const Json& device);

// The labels of every object of `service`: ManagedLabels and the service;
// InvalidArgument where `service` is not a label value.
StatusOr<kube::Labels> ServiceLabels(const std::string& service);

// `labels` with those of a site: the node, the GPU's index, the profile
// (ProfileLabel) and the start; without `exact` no index and start.
// InvalidArgument where the node or profile is not a label value.
StatusOr<kube::Labels> SiteLabels(kube::Labels labels, const GpuId& gpu,
                                  const mig::Profile& profile, int start,
                                  bool exact = true);

// Labels of one replica: who manages it, its service, node, GPU index,
// profile (ProfileLabel), start and routing group; without `exact` (a
// device plugin Deployment's pods, which get any free instance of the
// profile on the node) no GPU index and start. InvalidArgument where its
// service, node or profile is not a label value.
StatusOr<kube::Labels> ReplicaLabels(const Replica& replica,
                                     const InstanceRef& at, bool exact = true);

// The labels that select the replicas of `service`'s routing group `group`
// (GroupName); InvalidArgument where `service` is not a label value.
StatusOr<kube::Labels> GroupLabels(const std::string& service,
                                   const std::string& group);

// Annotations with the replica's batch, processes, throughput and latency,
// and the controller that owns it.
kube::Annotations ReplicaAnnotations(const Replica& replica,
                                     const std::string& owner = kDefaultOwner);

// Metadata of an object migserve writes: `name` (a checked value:
// ObjectLabel of what names it), the spec's namespace (if it names one),
// `labels` and `annotations` (if any).
Json ObjectMetadata(const ObjectName& name, const kube::Labels& labels,
                    const kube::Annotations& annotations,
                    const ServingSpec& spec);

// Pod (or pod template) metadata: the template's labels and annotations for
// `service` running `model`, then `labels` and `annotations` (ours win).
Json PodMetadata(const kube::Labels& labels,
                 const kube::Annotations& annotations, const ServingSpec& spec,
                 const std::string& service);

// Reads a replica back from pod or template metadata (labels' service and
// ReplicaAnnotations). Returns nullopt if a field is missing or bad; never
// throws, whatever `metadata` holds.
std::optional<Replica> ReplicaFromMetadata(const nlohmann::json& metadata);

// Where a replica pod runs, from its metadata's site labels (node, GPU,
// start; ReplicaLabels); nullopt if one is missing or bad.
std::optional<ReplicaSite> ReplicaSiteOf(const nlohmann::json& metadata);

// A pod spec pinned to `node` running `container`, with the pod-level
// fields of the template of `service` running `model` (volumes,
// tolerations, node selector, service account, image pull secrets) and
// `extra` fields (resourceClaims, say).
Json PodSpec(const std::string& node, Json container, const ServingSpec& spec,
             const std::string& service, const Json& extra = {});

// The limits that request one MIG device of `profile` from NVIDIA's device
// plugin (mixed strategy).
Json DevicePluginResources(const mig::Profile& profile);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_REPLICA_POD_H_
