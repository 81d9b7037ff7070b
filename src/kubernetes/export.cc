#include "kubernetes/export.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "boundary/checked_name.h"
#include "boundary/json_fields.h"
#include "dra/claim_order.h"
#include "dra/nvidia_devices.h"
#include "kube/labels.h"
#include "kube/serving_target.h"
#include "kube/yaml_writer.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/dra_classes.h"
#include "kubernetes/dra_objects.h"
#include "kubernetes/names.h"
#include "kubernetes/partition/dra_slices.h"
#include "kubernetes/replica_pod.h"
#include "kubernetes/routing/routing_objects.h"
#include "mig/gpu_catalog.h"
#include "util/file.h"

namespace migserve::kubernetes {
namespace {

// One replica with where it is.
struct Placed {
  const GpuState* gpu;
  const Slot* slot;
};

// The DNN model `replica` serves; a replica that names none runs its
// service's name.
const std::string& ModelOf(const Replica& replica) {
  return replica.model.empty() ? replica.service : replica.model;
}

// A Deployment of `replicas` pods of `service` labelled `labels` (which it
// selects by) with the template's labels and annotations added; the
// Deployment itself is labelled `own_labels`.
Json WorkloadDeployment(const std::string& name, const std::string& service,
                        const kube::Labels& own_labels,
                        const kube::Labels& labels,
                        const kube::Annotations& annotations, int replicas,
                        Json pod_spec, const ExportOptions& options) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", ObjectMetadata(ObjectLabel(name), own_labels,
                                      annotations, options.serving)},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", labels.ToJson()}}},
            {"template",
             {{"metadata",
               PodMetadata(labels, annotations, options.serving, service)},
              {"spec", std::move(pod_spec)}}}}}};
}

const mig::Profile& ProfileOf(const Placed& p) {
  return p.gpu->model->profiles[p.slot->instance.profile];
}

InstanceRef RefOf(const Placed& p) {
  return {p.gpu->id, p.gpu->model, p.slot->instance};
}

// Per (service, node, profile) a Deployment of its replicas there; each
// replica's Deployment goes to `owners`.
StatusOr<std::vector<Json>> DevicePluginObjects(
    const std::vector<Placed>& replicas, const ExportOptions& options,
    ReplicaOwners* owners) {
  // Replicas grouped by (service, node, profile, batch, procs, GPU model):
  // the device plugin's resource is named by the profile alone, so the pods
  // of one Deployment may get any free instance of it on the node.
  using Key =
      std::tuple<std::string, std::string, std::string, int, int, std::string>;
  std::map<Key, std::vector<Placed>> groups;
  std::map<std::tuple<std::string, std::string, std::string>, int> same_name;
  for (const Placed& p : replicas) {
    const Replica& r = *p.slot->replica;
    const std::string& profile = ProfileOf(p).name;
    Key key{r.service, p.gpu->id.node, profile,
            r.batch,   r.procs,        p.gpu->model->name};
    if (groups[key].empty()) ++same_name[{r.service, p.gpu->id.node, profile}];
    groups[key].push_back(p);
  }
  std::vector<Json> objects;
  for (const auto& [key, members] : groups) {
    const auto& [service, node, profile_name, batch, procs, gpu_model] = key;
    const mig::Profile& p = ProfileOf(members.front());
    std::string name = fmt::format("{}-{}-{}", service, node, profile_name);
    if (same_name[{service, node, profile_name}] > 1) {
      name += fmt::format("-b{}-p{}-{}", batch, procs, gpu_model);
    }
    const Replica& first = *members.front().slot->replica;
    InstanceRef at = RefOf(members.front());
    MIGSERVE_ASSIGN_OR_RETURN(kube::Labels labels,
                              ReplicaLabels(first, at, false));
    const std::string object_name = DnsLabel(name);
    std::string placements;
    for (const Placed& m : members) {
      if (!placements.empty()) placements += ",";
      placements +=
          fmt::format("{}:{}", m.gpu->id.index, m.slot->instance.start);
      (*owners)[service][{m.gpu->id, m.slot->instance.start}] = object_name;
    }
    kube::Annotations annotations = ReplicaAnnotations(first);
    annotations.Set(kAnnotationPlacements, placements);
    Json container = ServerContainer(first, ModelOf(first), {at, false},
                                     options.serving, DevicePluginResources(p));
    objects.push_back(WorkloadDeployment(
        object_name, service, labels, labels, annotations,
        static_cast<int>(members.size()),
        PodSpec(node, std::move(container), options.serving, service),
        options));
  }
  return objects;
}

// dra-apply.sh: applies replicas.yaml's objects that have no step, then
// each step's claim and pod, waiting until the claim is allocated and
// checking it got the planned device; a release deletes a holding claim
// and its pod. `steps`: "step N CLAIM DEVICE" and "release CLAIM" lines.
std::string DraApplyScript(const std::string& ns, const std::string& steps) {
  return fmt::format(
      R"sh(#!/bin/sh
# Written by migserve export (dra flavour): creates the ResourceClaims of
# replicas.yaml in the order that makes the scheduler's first-fit
# allocation give every GPU its planned MIG layout (docs/kubernetes.md,
# "Claims that land on the plan"). Each claim waits for the one before
# to be allocated; a claim that gets another device than planned stops
# the script. Run it with kubectl on the cluster: sh dra-apply.sh
set -eu
ns={}
objects="$(dirname "$0")/replicas.yaml"
kubectl apply -f "$objects" -l '!{}'
step() {{
  kubectl apply -f "$objects" -l "{}=$1"
  got=""
  for _ in $(seq 1 300); do
    got="$(kubectl -n "$ns" get resourceclaim "$2" \
      -o jsonpath='{{.status.allocation.devices.results[0].device}}')"
    [ -n "$got" ] && break
    sleep 1
  done
  if [ "$got" != "$3" ]; then
    echo "dra-apply: claim $2 got device '$got', planned $3" >&2
    exit 1
  fi
}}
release() {{
  kubectl -n "$ns" delete pod/"$1" resourceclaim/"$1" --wait=false
}}
{})sh",
      ns.empty() ? kReplicaNamespace : ns, kLabelClaimStep, kLabelClaimStep,
      steps);
}

// The claims of one GPU's replicas, and their holding claims, in the order
// dra::ClaimInstances gives (docs/kubernetes.md, "Claims that land on the
// plan"); each object labelled with its step, and `script` told each step
// and release in turn; each replica's Deployment goes to `owners`.
Status DraGpuObjects(const GpuState& gpu, const std::vector<Placed>& placed,
                     const ExportOptions& options, int* step,
                     std::vector<Json>* objects, std::string* script,
                     ReplicaOwners* owners) {
  const mig::GpuModel& model = *gpu.model;
  const std::string& node = gpu.id.node;
  int index = gpu.id.index;
  std::string uuid;
  if (!options.gpu_uuids.empty()) {
    auto it = options.gpu_uuids.find({node, index});
    if (it == options.gpu_uuids.end()) {
      return Status::InvalidArgument(fmt::format(
          "the resource slices list no GPU {} (no device gpu-{} of driver "
          "{} on node {})",
          gpu.id.ToString(), index, dra::kAttributeDomain, node));
    }
    uuid = it->second;
  }
  std::map<mig::Instance, const Placed*> at;
  std::vector<mig::Instance> add;
  for (const Placed& p : placed) {
    at[p.slot->instance] = &p;
    add.push_back(p.slot->instance);
  }
  dra::FirstFitNode alone(model, 1);
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<dra::ClaimStep> steps,
                            dra::ClaimInstances(&alone, 0, add));
  // A holding claim's (and its pod's) name, the same when it is released.
  auto hold_name = [&](const mig::Instance& instance) {
    return DnsLabel(fmt::format("hold-{}-{}-{}", node, index, instance.start));
  };
  for (const dra::ClaimStep& s : steps) {
    const mig::Profile& profile = model.profiles[s.at.instance.profile];
    std::string device = dra::MigDeviceName(model, index, s.at.instance);
    std::string selector = DraSelector(profile, uuid);
    std::string name;
    if (s.kind == dra::ClaimStep::Kind::kRelease) {
      *script += fmt::format("release {}\n", hold_name(s.at.instance));
      continue;
    }
    MIGSERVE_ASSIGN_OR_RETURN(kube::LabelValue step_label,
                              NumberLabel((*step)++));
    if (s.kind == dra::ClaimStep::Kind::kHold) {
      name = hold_name(s.at.instance);
      kube::Labels labels = ManagedLabels();
      MIGSERVE_ASSIGN_OR_RETURN(kube::LabelValue node_label, NodeLabel(gpu.id));
      labels.Set(kLabelNode, std::move(node_label))
          .Set(kLabelClaimStep, step_label);
      objects->push_back(
          DraClaim(name, labels, device, selector, options.serving));
      objects->push_back(HoldPod(name, labels, device, node, options.serving));
    } else {
      const Placed& p = *at.at(s.at.instance);
      const Replica& r = *p.slot->replica;
      name = ReplicaName(r.service, node, index, profile, s.at.instance.start);
      (*owners)[r.service][{gpu.id, s.at.instance.start}] = name;
      MIGSERVE_ASSIGN_OR_RETURN(kube::Labels labels,
                                ReplicaLabels(r, RefOf(p)));
      kube::Labels claim_labels = labels;
      claim_labels.Set(kLabelClaimStep, step_label);
      objects->push_back(
          DraClaim(name, claim_labels, device, selector, options.serving));
      Json container =
          ServerContainer(r, ModelOf(r), {RefOf(p), true}, options.serving,
                          {{"claims", Json::array({{{"name", "mig"}}})}});
      Json claims = {
          {"resourceClaims",
           Json::array({{{"name", "mig"}, {"resourceClaimName", name}}})}};
      Json deployment = WorkloadDeployment(
          name, r.service, claim_labels, labels, ReplicaAnnotations(r), 1,
          PodSpec(node, std::move(container), options.serving, r.service,
                  claims),
          options);
      // Two pods must never hold the claim at once.
      deployment["spec"]["strategy"] = {{"type", "Recreate"}};
      objects->push_back(std::move(deployment));
    }
    *script += fmt::format("step {} {} {}\n", step_label.str(), name, device);
  }
  return Status::Ok();
}

// Per replica a claim and a one-replica Deployment, GPU after GPU, with
// the holding claims first-fit needs; `script` gets dra-apply.sh, `owners`
// each replica's Deployment.
StatusOr<std::vector<Json>> DraObjects(const std::vector<Placed>& replicas,
                                       const ExportOptions& options,
                                       std::string* script,
                                       ReplicaOwners* owners) {
  std::vector<Json> objects;
  std::string steps;
  int step = 0;
  for (size_t i = 0; i < replicas.size();) {
    size_t j = i;
    while (j < replicas.size() && replicas[j].gpu == replicas[i].gpu) ++j;
    std::vector<Placed> on(replicas.begin() + i, replicas.begin() + j);
    MIGSERVE_RETURN_IF_ERROR(DraGpuObjects(*replicas[i].gpu, on, options, &step,
                                           &objects, &steps, owners));
    i = j;
  }
  *script = DraApplyScript(options.serving.namespace_, steps);
  return objects;
}

// At most one of `service`'s replicas down at a time by a voluntary
// disruption (a node drain): the service asked for min_replicas so that
// losing one leaves it serving. Its replicas are Deployments, whose scale
// the disruption controller reads.
StatusOr<Json> ReplicaDisruptionBudget(const std::string& service,
                                       const ServingSpec& spec) {
  MIGSERVE_ASSIGN_OR_RETURN(kube::Labels labels, ServiceLabels(service));
  return Json{
      {"apiVersion", "policy/v1"},
      {"kind", "PodDisruptionBudget"},
      {"metadata", ObjectMetadata(ObjectLabel(service), labels, {}, spec)},
      {"spec",
       {{"maxUnavailable", 1},
        {"selector", {{"matchLabels", labels.ToJson()}}}}}};
}

}  // namespace

std::map<std::string, std::string> ModelsOf(const ClusterState& state) {
  std::map<std::string, std::string> models;
  for (const GpuState& g : state.gpus) {
    for (const Slot& s : g.slots) {
      if (s.replica) models[s.replica->service] = ModelOf(*s.replica);
    }
  }
  return models;
}

StatusOr<std::string> ReplicaObjects(const ClusterState& state,
                                     const ExportOptions& options,
                                     std::string* dra_apply,
                                     ReplicaOwners* owners) {
  std::vector<Placed> replicas;
  for (const GpuState& g : state.gpus) {
    MIGSERVE_RETURN_IF_ERROR(CheckLabelValue(
        g.id.node, fmt::format("node of GPU {}", g.id.ToString())));
    for (const Slot& s : g.slots) {
      if (!s.replica) continue;
      MIGSERVE_RETURN_IF_ERROR(
          CheckLabelValue(s.replica->service,
                          fmt::format("service on GPU {}", g.id.ToString())));
      replicas.push_back({&g, &s});
    }
  }
  bool dra = options.partitioner == Partitioner::kDra;
  std::vector<Json> objects;
  ReplicaOwners made;
  if (dra) {
    std::string script;
    MIGSERVE_ASSIGN_OR_RETURN(objects,
                              DraObjects(replicas, options, &script, &made));
    if (dra_apply != nullptr) *dra_apply = std::move(script);
  } else {
    MIGSERVE_ASSIGN_OR_RETURN(objects,
                              DevicePluginObjects(replicas, options, &made));
  }
  if (owners != nullptr) *owners = std::move(made);
  std::set<std::string> served;
  for (const Placed& p : replicas) served.insert(p.slot->replica->service);
  for (const auto& [service, least] : options.min_replicas) {
    if (least > 1 && served.count(service)) {
      MIGSERVE_ASSIGN_OR_RETURN(
          Json budget, ReplicaDisruptionBudget(service, options.serving));
      objects.push_back(std::move(budget));
    }
  }
  std::string header = fmt::format(
      "# Kubernetes objects written by migserve export ({} flavour, {}):\n"
      "# {}\n",
      FacetsOf(options.partitioner).flavor, GpuModelNames(state),
      !dra ? "per (service, node, profile) a Deployment requesting\n"
             "# nvidia.com/mig-<profile> (device plugin, mixed strategy)."
           : "per replica a ResourceClaim for NVIDIA's DRA driver\n"
             "# (DynamicMIG) and a one-replica Deployment using it.");
  return header + kube::ToYaml(objects);
}

StatusOr<std::string> RoutingObjects(const ClusterState& state,
                                     const ServingSpec& spec) {
  std::map<std::string, std::string> models = ModelsOf(state);
  MIGSERVE_RETURN_IF_ERROR(CheckRoutable(models, spec));
  std::vector<Json> services, routes;
  for (const auto& [service, route] : Routes(state)) {
    GroupServiceNames names = SettledNames(route);
    for (const RouteGroup& g : route.groups) {
      if (g.weight <= 0) continue;  // no backend of the route
      MIGSERVE_ASSIGN_OR_RETURN(
          Json object,
          GroupService(service, g, names.at(GroupName(service, g)), spec));
      services.push_back(std::move(object));
    }
    MIGSERVE_ASSIGN_OR_RETURN(
        Json object, HttpRoute(route, models.at(service), names, spec));
    routes.push_back(std::move(object));
  }
  services.insert(services.end(), routes.begin(), routes.end());
  std::string header = fmt::format(
      "# Routing objects written by migserve export ({}): per routing group\n"
      "# (replicas of a service with one GPU model, profile, batch and MPS\n"
      "# processes) a Service selecting its pods, and per service an\n"
      "# HTTPRoute on gateway {} whose backends are weighted by capacity\n"
      "# (replicas x throughput), so no replica gets more than it serves.\n",
      GpuModelNames(state), spec.gateway->name);
  return header + kube::ToYaml(services);
}

StatusOr<std::map<std::pair<std::string, int>, std::string>> GpuUuidsOfSlices(
    const std::string& json, const std::string& source,
    const ClusterState* state) {
  MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json list, ParseJson(json, source));
  const nlohmann::json* items =
      list.is_object() ? ArrayAt(list, "items") : nullptr;
  if (items == nullptr) {
    return Status::InvalidArgument(fmt::format(
        "{}: not a ResourceSliceList (kubectl get resourceslices -o json)",
        source));
  }
  MIGSERVE_ASSIGN_OR_RETURN(
      SliceGpus gpus,
      GpusOfSlices(items->get<std::vector<nlohmann::json>>(), source));
  if (state != nullptr) {
    MIGSERVE_RETURN_IF_ERROR(CheckSlicesCover(gpus, *state, source));
  }
  std::map<std::pair<std::string, int>, std::string> uuids;
  for (const auto& [at, gpu] : gpus) uuids[at] = gpu.uuid;
  return uuids;
}

StatusOr<ExportedFiles> Export(const ClusterState& state,
                               const ExportOptions& options) {
  ExportedFiles files;
  if (options.partitioner == Partitioner::kGpuOperator) {
    files.mig_manager = MigManagerConfigMap(state);
  } else {
    files.mig_parted = MigPartedConfig(state);
  }
  ReplicaOwners owners;
  MIGSERVE_ASSIGN_OR_RETURN(
      files.replicas,
      ReplicaObjects(state, options, &files.dra_apply, &owners));
  if (options.partitioner == Partitioner::kDra)
    files.device_classes = DeviceClasses(state);
  if (options.serving.gateway) {
    MIGSERVE_ASSIGN_OR_RETURN(files.routing,
                              RoutingObjects(state, options.serving));
  }
  if (options.proxy) {
    files.proxy = ProxyObjects(state, ModelsOf(state), options.serving,
                               *options.proxy, owners);
  }
  if (options.target) {
    nlohmann::ordered_json object = kube::ServingTargetObject(
        options.serving.namespace_, options.target->name,
        options.target->deployment);
    files.target =
        fmt::format(
            "# The target written by migserve export: the controller\n"
            "# (controller --target-resource {}) moves the cluster here and\n"
            "# reports in its status (kubectl get servingtargets -n {}).\n",
            options.target->name, options.serving.namespace_) +
        kube::ToYaml({object});
  }
  return files;
}

StatusOr<WrittenExport> WriteExport(const ExportedFiles& files,
                                    const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return Status::InvalidArgument(
        fmt::format("{}: cannot create: {}", dir, error.message()));
  }
  std::vector<std::pair<std::string, std::string>> out;
  WrittenExport done;
  std::vector<std::string> stale;
  for (auto [name, text] :
       {std::pair{"mig-parted.yaml", &files.mig_parted},
        std::pair{"mig-manager.yaml", &files.mig_manager},
        std::pair{"replicas.yaml", &files.replicas},
        std::pair{"routing.yaml", &files.routing},
        std::pair{"proxy.yaml", &files.proxy},
        std::pair{"dra-apply.sh", &files.dra_apply},
        std::pair{"device-classes.yaml", &files.device_classes},
        std::pair{"target.yaml", &files.target}}) {
    std::string path = (std::filesystem::path(dir) / name).string();
    if (!text->empty()) {
      out.emplace_back(path, *text);
      done.written.push_back(path);
    } else {
      stale.push_back(path);
    }
  }
  MIGSERVE_RETURN_IF_ERROR(WriteFilesAtomic(out));
  for (const std::string& path : stale) {
    if (std::filesystem::remove(path, error)) done.removed.push_back(path);
  }
  return done;
}

}  // namespace migserve::kubernetes
