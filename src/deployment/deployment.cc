#include "deployment/deployment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <map>
#include <set>

#include "util/enum_names.h"

namespace migserve::deployment {

namespace {

constexpr EnumName<SolveStatus> kStatusNames[] = {
    {SolveStatus::kOptimal, "optimal"},
    {SolveStatus::kFeasible, "feasible"},
    {SolveStatus::kTimeLimit, "time_limit"},
    {SolveStatus::kInterrupted, "interrupted"},
    {SolveStatus::kInfeasible, "infeasible"}};

}  // namespace

std::string_view SolveStatusName(SolveStatus status) {
  return NameOf(kStatusNames, status);
}

std::optional<SolveStatus> ParseSolveStatus(std::string_view name) {
  return ValueOf(kStatusNames, name);
}

bool DeployedGpu::Serving() const {
  return std::any_of(instances.begin(), instances.end(),
                     [](const PlacedInstance& i) { return i.service; });
}

int Deployment::UsedGpus() const {
  return static_cast<int>(
      std::count_if(gpus.begin(), gpus.end(),
                    [](const DeployedGpu& g) { return g.Serving(); }));
}

bool Deployment::Placed() const {
  for (const DeployedGpu& g : gpus) {
    if (!g.node || !g.index) return false;
  }
  return true;
}

queueing::DataPlane Deployment::Plane() const {
  return summary && summary->router ? summary->router->traits().plane
                                    : queueing::DataPlane::kGatewayOnly;
}

std::vector<std::string> Deployment::ServedServices() const {
  std::set<std::string> served;
  for (const DeployedGpu& g : gpus) {
    for (const PlacedInstance& i : g.instances) {
      if (i.service) served.insert(*i.service);
    }
  }
  return {served.begin(), served.end()};
}

std::vector<double> Deployment::CreditedRates(
    const std::vector<std::string>& services) const {
  std::map<std::string, double> credited;
  for (const DeployedGpu& g : gpus) {
    for (const PlacedInstance& i : g.instances) {
      if (i.service) credited[*i.service] += i.credit;
    }
  }
  std::vector<double> out;
  for (const std::string& s : services) {
    auto it = credited.find(s);
    out.push_back(it == credited.end() ? 0 : it->second);
  }
  return out;
}

const std::string& Deployment::GpuModelOf(size_t g) const {
  return gpus[g].gpu ? *gpus[g].gpu : gpu;
}

Deployment MakeDeployment(const workload::Workload& workload,
                          const mig::GpuModel& gpu,
                          const workload::CapacityMatrix& caps,
                          const std::vector<GpuConfig>& configs) {
  Deployment d;
  d.gpu = gpu.name;
  d.services = workload.services;
  d.survive = workload.survive;
  for (size_t g = 0; g < configs.size(); ++g) {
    DeployedGpu out;
    out.id = static_cast<int>(g);
    const auto& instances = configs[g].layout.instances();
    for (size_t k = 0; k < instances.size(); ++k) {
      PlacedInstance p;
      p.profile = gpu.profiles[instances[k].profile].name;
      p.start = instances[k].start;
      int s = configs[g].services[k];
      if (s != kIdle) {
        const profile::ProfileRow* row = caps.row(s, instances[k].profile);
        assert(row != nullptr);
        p.service = workload.services[s].name;
        p.batch = row->batch;
        p.procs = row->procs;
        p.credit = caps.throughput(s, instances[k].profile);
        p.latency_ms = row->latency_ms;
      }
      out.instances.push_back(std::move(p));
    }
    d.gpus.push_back(std::move(out));
  }
  return d;
}

std::string UnplacedNode(int id, int gpus_per_node) {
  return fmt::format("node-{}", id / gpus_per_node);
}

}  // namespace migserve::deployment
