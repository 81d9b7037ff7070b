// How migserve names and labels what it puts on Kubernetes: the label keys
// that identify a replica (service, node, GPU, placement), object names
// that Kubernetes accepts, a GPU's device index on its node, and how an
// annotation is read.
#ifndef MIGSERVE_KUBERNETES_NAMES_H_
#define MIGSERVE_KUBERNETES_NAMES_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "boundary/plain_name.h"
#include "cluster/cluster_state.h"
#include "cluster/routing.h"
#include "kube/labels.h"
#include "kubernetes/cluster_model.h"
#include "util/status.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

inline constexpr char kManagedBy[] = "app.kubernetes.io/managed-by";
inline constexpr char kManager[] = "migserve";
// The replicas' namespace where nothing else names one: deploy/'s (the
// controller's Role there), examples/' and what `export` writes into.
inline constexpr char kReplicaNamespace[] = "migserve-replicas";
inline constexpr char kLabelService[] = "migserve.io/service";
inline constexpr char kLabelNode[] = "migserve.io/node";
inline constexpr char kLabelProfile[] = "migserve.io/profile";
inline constexpr char kLabelGpu[] = "migserve.io/gpu";  // index on the node
inline constexpr char kLabelStart[] = "migserve.io/start";
// The routing group (routing.h) of a replica: its group Service selects it.
inline constexpr char kLabelGroup[] = "migserve.io/group";
// Annotations: where the replicas of a group sit ("<gpu index>:<start>,..."),
// and the batch, MPS processes, throughput and latency of a replica.
inline constexpr char kAnnotationPlacements[] = "migserve.io/placements";
inline constexpr char kAnnotationBatch[] = "migserve.io/batch";
inline constexpr char kAnnotationProcs[] = "migserve.io/procs";
inline constexpr char kAnnotationThroughput[] = "migserve.io/throughput";
inline constexpr char kAnnotationLatency[] = "migserve.io/latency-ms";
inline constexpr char kAnnotationModel[] = "migserve.io/model";
// On a ResourceClaim of the controller's DRA partition driver and on the
// pod that holds it (partition/dra_driver.h): "planned" for an instance of
// the plan, which replicas share; "hold" for a holding claim that keeps
// first-fit off a lower start until the planned ones are allocated.
inline constexpr char kLabelInstance[] = "migserve.io/instance";
// The DRA driver's name of the exact MIG device a claim is for.
inline constexpr char kAnnotationDevice[] = "migserve.io/device";
// The step of dra-apply.sh that creates a DRA claim and its pod (export's
// dra flavour): claims are created in this order, each once the one before
// is allocated.
inline constexpr char kLabelClaimStep[] = "migserve.io/claim-step";
// What a holding claim's pod runs: nothing.
inline constexpr char kPauseImage[] = "registry.k8s.io/pause:3.10";
// Which controller a replica pod belongs to: a controller counts and
// deletes only pods whose owner is its own name (docs/kubernetes.md,
// "Adopting pods").
inline constexpr char kAnnotationOwner[] = "migserve.io/owner";
inline constexpr char kDefaultOwner[] = "migserve-controller";
// The random token a controller wrote into a pod it created, also kept in
// its ledger until the pod's uid is (pod_ledger.h).
inline constexpr char kAnnotationCreation[] = "migserve.io/creation";
// On the routes the controller writes (the proxy's routes ConfigMap, each
// HTTPRoute): the leaseTransitions of the Lease its writer held, a fencing
// token. A controller never writes over a newer one's, and the proxy
// applies no routes older than the newest it has seen.
inline constexpr char kAnnotationEpoch[] = "migserve.io/lease-epoch";

// Returns annotation `key` of the object `object`, or "".
std::string Annotation(const nlohmann::json& object, const std::string& key);
// The fencing token an object carries (kAnnotationEpoch); 0 without one,
// InvalidArgument where it is not a whole number.
StatusOr<long> EpochOf(const nlohmann::json& object);
// Returns label `key` of the object `object`, or "".
std::string Label(const nlohmann::json& object, const std::string& key);

// The name of the pod (or DRA claim) of `service`'s replica at `start` of
// GPU `index` on `node`: the same replica always gets the same name.
std::string ReplicaName(const std::string& service, const std::string& node,
                        int index, const mig::Profile& profile, int start);

// The value of the kLabelGroup label of the replicas of `service`'s
// routing group `group`, its whole identity with its credit; also the name
// of the group's Service while another group holds its slot's name
// (SlotName): a DNS-1035 label.
std::string GroupName(const std::string& service, const RouteGroup& group);
// The name of the Service of `service`'s replicas on one GPU model,
// profile, batch and MPS processes: a group's identity without its credit,
// so that a credit's change leaves it as it was (docs/serving.md, "Are
// group names stable?"). It selects one group at a time: a DNS-1035 label.
std::string SlotName(const std::string& service, const RouteGroup& group);

// The extended resource of MIG `profile` that NVIDIA's device plugin
// advertises under its mixed strategy: nvidia.com/mig-<profile>, a '+'
// written '.' (nvidia.com/mig-1g.10gb.me).
std::string MigResourceName(const mig::Profile& profile);

// The name of `service`'s HTTPRoute.
std::string RouteName(const std::string& service);

// The label of every object migserve writes: managed by migserve.
kube::Labels ManagedLabels();

// The node of `gpu` as a label value; InvalidArgument "node of GPU
// <gpu>: ..." where its name is not one.
StatusOr<kube::LabelValue> NodeLabel(const GpuId& gpu);

// A whole number (a GPU's index, a start) as a label value;
// InvalidArgument if it is negative.
StatusOr<kube::LabelValue> NumberLabel(int n);

// A profile's name as a label value: with '+' (1g.10gb+me), which a label
// value cannot hold, as '.' (1g.10gb.me), as NVIDIA's device plugin spells
// its resource (MigResourceName).
StatusOr<kube::LabelValue> ProfileLabel(const mig::Profile& profile);
// The index in `model` of the profile labelled `label` (its name or
// ProfileLabel), or -1.
int ProfileOfLabel(const mig::GpuModel& model, std::string_view label);

// Returns InvalidArgument naming `what` unless `value` is a valid label
// value (at most 63 of [A-Za-z0-9_.-], alphanumeric at both ends).
Status CheckLabelValue(std::string_view value, std::string_view what);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_NAMES_H_
