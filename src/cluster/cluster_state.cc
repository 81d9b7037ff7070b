#include "cluster/cluster_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "mig/gpu_catalog.h"
#include "util/tolerance.h"

namespace migserve::cluster {

bool Replica::Covers(const Replica& want) const {
  return service == want.service && credit >= want.credit - kCapacityTolerance;
}

mig::Layout GpuState::layout() const {
  std::vector<mig::Instance> instances;
  for (const Slot& s : slots) instances.push_back(s.instance);
  return mig::Layout(std::move(instances));
}

Slot* GpuState::Find(const mig::Instance& instance) {
  for (Slot& s : slots) {
    if (s.instance == instance) return &s;
  }
  return nullptr;
}

const Slot* GpuState::Find(const mig::Instance& instance) const {
  return const_cast<GpuState*>(this)->Find(instance);
}

bool GpuState::HasReplica() const {
  return std::any_of(slots.begin(), slots.end(),
                     [](const Slot& s) { return s.replica.has_value(); });
}

GpuState* ClusterState::FindGpu(const GpuId& id) {
  auto it = std::lower_bound(
      gpus.begin(), gpus.end(), id,
      [](const GpuState& g, const GpuId& value) { return g.id < value; });
  return it != gpus.end() && it->id == id ? &*it : nullptr;
}

const GpuState* ClusterState::FindGpu(const GpuId& id) const {
  return const_cast<ClusterState*>(this)->FindGpu(id);
}

Slot* ClusterState::FindServing(const GpuId& gpu, const mig::Instance& instance,
                                const std::string& service) {
  GpuState* g = FindGpu(gpu);
  Slot* slot = g == nullptr ? nullptr : g->Find(instance);
  return slot != nullptr && slot->replica && slot->replica->service == service
             ? slot
             : nullptr;
}

const Slot* ClusterState::FindServing(const GpuId& gpu,
                                      const mig::Instance& instance,
                                      const std::string& service) const {
  return const_cast<ClusterState*>(this)->FindServing(gpu, instance, service);
}

bool ClusterState::Mixed() const {
  return std::any_of(gpus.begin(), gpus.end(), [&](const GpuState& g) {
    return g.model != gpus.front().model;
  });
}

void ClusterState::Sort() {
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuState& a, const GpuState& b) { return a.id < b.id; });
}

std::map<std::string, double> GpuState::Capacity() const {
  std::map<std::string, double> capacity;
  for (const Slot& s : slots) {
    if (s.replica) capacity[s.replica->service] += s.replica->credit;
  }
  return capacity;
}

std::map<std::string, double> ClusterState::Capacity() const {
  // Each GPU's sum, then those in GPU order: the order in which the
  // simulated cluster keeps its capacities up to date GPU by GPU, so that
  // both give the same number to the last bit.
  std::map<std::string, double> capacity;
  for (const GpuState& g : gpus) {
    for (const auto& [service, value] : g.Capacity()) {
      capacity[service] += value;
    }
  }
  return capacity;
}

int ClusterState::UsedGpus() const {
  return static_cast<int>(
      std::count_if(gpus.begin(), gpus.end(),
                    [](const GpuState& g) { return g.HasReplica(); }));
}

mig::MigOptions ControllerMigOptions() {
  return mig::MigOptions{.legacy_4g3g = false, .optional_profiles = true};
}

namespace {

std::string ServiceModel(const deployment::Deployment& d,
                         const std::string& service) {
  for (const workload::Service& s : d.services) {
    if (s.name == service) return s.model;
  }
  return "";
}

}  // namespace

StatusOr<const mig::GpuModel*> DeployedGpuModel(
    const deployment::Deployment& deployment, size_t g) {
  auto model = mig::GpuCatalog::Default().Find(deployment.GpuModelOf(g));
  if (!model.ok()) {
    return model.status().WithPrefix(
        fmt::format("{}: gpus[{}].gpu", deployment.source, g));
  }
  return *model;
}

Status PlacementOptions::Validate() const {
  if (gpus_per_node < 1) {
    return Status::InvalidArgument(
        fmt::format("gpus_per_node: must be >= 1, got {}", gpus_per_node));
  }
  if (min_gpus < 0) {
    return Status::InvalidArgument(
        fmt::format("min_gpus: must be >= 0, got {}", min_gpus));
  }
  return Status::Ok();
}

StatusOr<ClusterState> ClusterFromDeployment(
    const deployment::Deployment& deployment,
    const PlacementOptions& placement) {
  MIGSERVE_RETURN_IF_ERROR(placement.Validate());
  ClusterState state;
  // A GPU with a node but no index: its rank by id among the node's GPUs.
  std::map<std::string, std::set<int>> ids_on_node;
  for (const deployment::DeployedGpu& in : deployment.gpus) {
    if (in.node) ids_on_node[*in.node].insert(in.id);
  }
  std::set<GpuId> seen;
  for (size_t k = 0; k < deployment.gpus.size(); ++k) {
    const deployment::DeployedGpu& in = deployment.gpus[k];
    std::string where = fmt::format("{}: gpus[{}]", deployment.source, k);
    GpuState out;
    MIGSERVE_ASSIGN_OR_RETURN(out.model, DeployedGpuModel(deployment, k));
    if (!in.node) {
      out.id = UnplacedGpuId(in.id, placement.gpus_per_node);
    } else {
      const std::set<int>& ids = ids_on_node[*in.node];
      out.id = {*in.node, in.index ? *in.index
                                   : static_cast<int>(std::distance(
                                         ids.begin(), ids.find(in.id)))};
    }
    if (!seen.insert(out.id).second) {
      return Status::InvalidArgument(
          fmt::format("{}: GPU {} is listed twice", where, out.id.ToString()));
    }
    const mig::GpuModel& gpu = *out.model;
    for (size_t i = 0; i < in.instances.size(); ++i) {
      const deployment::PlacedInstance& p = in.instances[i];
      int profile = gpu.FindProfile(p.profile);
      if (profile < 0) {
        return Status::InvalidArgument(
            fmt::format("{}.instances[{}].profile: {} has no profile {}", where,
                        i, gpu.name, p.profile));
      }
      Slot slot{{profile, p.start}, std::nullopt};
      if (p.service) {
        slot.replica = Replica{
            *p.service, p.batch,      p.procs,
            p.credit,   p.latency_ms, ServiceModel(deployment, *p.service)};
      }
      out.slots.push_back(std::move(slot));
    }
    std::sort(
        out.slots.begin(), out.slots.end(),
        [](const Slot& a, const Slot& b) { return a.instance < b.instance; });
    std::string why;
    if (!mig::IsLegal(gpu, out.layout(), ControllerMigOptions(), &why)) {
      return Status::InvalidArgument(
          fmt::format("{}: illegal layout: {}", where, why));
    }
    state.gpus.push_back(std::move(out));
  }
  if (static_cast<int>(state.gpus.size()) < placement.min_gpus) {
    auto model = mig::GpuCatalog::Default().Find(deployment.gpu);
    if (!model.ok()) {
      return model.status().WithPrefix(deployment.source + ": gpu");
    }
    for (int next = 0; static_cast<int>(state.gpus.size()) < placement.min_gpus;
         ++next) {
      GpuId id = UnplacedGpuId(next, placement.gpus_per_node);
      if (seen.insert(id).second) state.gpus.push_back({id, *model, {}});
    }
  }
  state.Sort();
  return state;
}

void AddSpareGpus(int count, int gpus_per_node, const mig::GpuModel& model,
                  ClusterState* state) {
  for (int k = 0; k < count; ++k) {
    state->gpus.push_back(
        {{fmt::format("spare-{}", k / gpus_per_node), k % gpus_per_node},
         &model,
         {}});
  }
  state->Sort();
}

StatusOr<std::vector<workload::Service>> ObservedServices(
    const ClusterState& state) {
  // By name: the service and its replicas' summed credit.
  std::map<std::string, std::pair<workload::Service, double>> services;
  for (const GpuState& g : state.gpus) {
    for (const Slot& s : g.slots) {
      if (!s.replica) continue;
      auto& [out, credit] = services[s.replica->service];
      out.name = s.replica->service;
      if (out.model.empty()) out.model = s.replica->model;
      credit += s.replica->credit;
    }
  }
  std::vector<workload::Service> out;
  for (auto& [name, entry] : services) {
    StatusOr<Rate> rate = Rate::Of(entry.second);
    if (!rate.ok()) {
      return Status::InvalidArgument(
          fmt::format("service '{}': its replicas' credits: {}", name,
                      rate.status().message()));
    }
    entry.first.throughput = *rate;
    out.push_back(std::move(entry.first));
  }
  return out;
}

deployment::Deployment ToDeployment(
    const ClusterState& state, const std::vector<workload::Service>& services) {
  deployment::Deployment d;
  if (!state.gpus.empty()) d.gpu = state.gpus.front().model->name;
  d.services = services;
  bool mixed = state.Mixed();
  for (const GpuState& g : state.gpus) {
    const mig::GpuModel& gpu = *g.model;
    deployment::DeployedGpu out;
    out.id = static_cast<int>(d.gpus.size());
    out.node = g.id.node;
    out.index = g.id.index;
    if (mixed) out.gpu = gpu.name;
    for (const Slot& s : g.slots) {
      deployment::PlacedInstance p;
      p.profile = gpu.profiles[s.instance.profile].name;
      p.start = s.instance.start;
      if (s.replica) {
        p.service = s.replica->service;
        p.batch = s.replica->batch;
        p.procs = s.replica->procs;
        p.credit = s.replica->credit;
        p.latency_ms = s.replica->latency_ms;
      }
      out.instances.push_back(std::move(p));
    }
    d.gpus.push_back(std::move(out));
  }
  return d;
}

}  // namespace migserve::cluster
