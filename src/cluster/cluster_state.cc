#include "cluster/cluster_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace migserve::cluster {

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

GpuState* ClusterState::FindGpu(int id) {
  auto it = std::lower_bound(
      gpus.begin(), gpus.end(), id,
      [](const GpuState& g, int value) { return g.id < value; });
  return it != gpus.end() && it->id == id ? &*it : nullptr;
}

const GpuState* ClusterState::FindGpu(int id) const {
  return const_cast<ClusterState*>(this)->FindGpu(id);
}

std::map<std::string, double> ClusterState::Capacity() const {
  std::map<std::string, double> capacity;
  for (const GpuState& g : gpus) {
    for (const Slot& s : g.slots) {
      if (s.replica) capacity[s.replica->service] += s.replica->throughput;
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

StatusOr<ClusterState> ClusterFromDeployment(
    const deployment::Deployment& deployment, const mig::GpuModel& gpu,
    const PlacementOptions& placement) {
  if (deployment.gpu != gpu.name) {
    return Status::InvalidArgument(fmt::format("{}: gpu: {} does not match {}",
                                               deployment.source,
                                               deployment.gpu, gpu.name));
  }
  ClusterState state;
  std::set<int> ids;
  for (size_t k = 0; k < deployment.gpus.size(); ++k) {
    const deployment::DeployedGpu& in = deployment.gpus[k];
    std::string where = fmt::format("{}: gpus[{}]", deployment.source, k);
    if (!ids.insert(in.id).second) {
      return Status::InvalidArgument(
          fmt::format("{}.id: GPU id {} is listed twice", where, in.id));
    }
    GpuState out;
    out.id = in.id;
    out.node = in.node
                   ? *in.node
                   : fmt::format("node-{}", in.id / placement.gpus_per_node);
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
        slot.replica =
            Replica{*p.service, p.batch, p.procs, p.throughput, p.latency_ms};
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
  std::sort(state.gpus.begin(), state.gpus.end(),
            [](const GpuState& a, const GpuState& b) { return a.id < b.id; });
  int next = state.gpus.empty() ? 0 : state.gpus.back().id + 1;
  while (static_cast<int>(state.gpus.size()) < placement.min_gpus) {
    state.gpus.push_back(
        {next, fmt::format("node-{}", next / placement.gpus_per_node), {}});
    ++next;
  }
  return state;
}

void AddSpareGpus(int count, int gpus_per_node, ClusterState* state) {
  int next = state->gpus.empty() ? 0 : state->gpus.back().id + 1;
  for (int k = 0; k < count; ++k) {
    state->gpus.push_back(
        {next + k, fmt::format("spare-{}", k / gpus_per_node), {}});
  }
}

deployment::Deployment ToDeployment(
    const ClusterState& state, const mig::GpuModel& gpu,
    const std::vector<workload::Service>& services) {
  deployment::Deployment d;
  d.gpu = gpu.name;
  d.services = services;
  for (const GpuState& g : state.gpus) {
    deployment::DeployedGpu out{g.id, g.node, std::nullopt, {}};
    for (const Slot& s : g.slots) {
      deployment::PlacedInstance p;
      p.profile = gpu.profiles[s.instance.profile].name;
      p.start = s.instance.start;
      if (s.replica) {
        p.service = s.replica->service;
        p.batch = s.replica->batch;
        p.procs = s.replica->procs;
        p.throughput = s.replica->throughput;
        p.latency_ms = s.replica->latency_ms;
      }
      out.instances.push_back(std::move(p));
    }
    d.gpus.push_back(std::move(out));
  }
  return d;
}

}  // namespace migserve::cluster
