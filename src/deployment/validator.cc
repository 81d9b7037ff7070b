#include "deployment/validator.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "llm/llm_credit.h"
#include "llm/llm_model.h"
#include "llm/slice_model.h"
#include "mig/gpu_catalog.h"
#include "mig/layout.h"
#include "profile/capacity.h"
#include "profile/shipped_profiles.h"
#include "queueing/capacity_model.h"
#include "util/tolerance.h"
#include "workload/replica_credit.h"

namespace migserve::deployment {
namespace {

// The failure domain of `gpu` under the workload's survive: "gpu <id>", or
// "node <name>" (its node, else its unplaced node); "" without survive.
std::string FailureDomainOf(const DeployedGpu& gpu,
                            const workload::Workload& workload) {
  if (!workload.survive) return "";
  if (workload.survive->domain == workload::FailureDomain::kGpu) {
    return fmt::format("gpu {}", gpu.id);
  }
  return "node " + (gpu.node ? *gpu.node : UnplacedNode(gpu.id));
}

// Adds a problem if losing the domain that carries the most of service `j`
// (of `provided` req/s) leaves it below what survive says it must keep.
void CheckSurvival(const workload::Workload& workload, size_t j,
                   double provided,
                   const std::map<std::string, double>& carried,
                   ValidationReport* report) {
  const workload::Service& service = workload.services[j];
  double kept = workload.Kept(service);
  if (kept <= 0 || carried.empty()) return;
  auto worst = std::max_element(
      carried.begin(), carried.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  double lost = worst->second;
  if (provided - lost >= kept * (1 - kRateTolerance)) return;
  report->problems.push_back(fmt::format(
      "service '{}': losing {} leaves {:.6g} req/s, below the {:.6g} it must "
      "keep (survive: keep {} of {:.6g} req/s, {})",
      service.name, worst->first, provided - lost, kept, workload.survive->keep,
      service.throughput.value(), workload.source));
}

// What is wrong with replica `pi` declaring more than `ceiling`, the most
// `basis` allows it (ReplicaCredit::ceiling); "" if it does not. A
// deployment's file rounds what it declares: a millionth is let through.
std::string Overstated(const PlacedInstance& pi, double ceiling,
                       const std::string& basis) {
  if (pi.credit <= ceiling * (1 + 1e-6) + kRateTolerance) return "";
  return fmt::format("declares {:.6g} req/s for '{}', more than the {:.6g} {}",
                     pi.credit, *pi.service, ceiling, basis);
}

// What `pi` declares beyond its measured `row` (from `source`): more
// throughput, or a latency under the batch's own (no queue makes a
// request faster than its batch); "" if neither.
std::string BeyondRow(const PlacedInstance& pi, const profile::ProfileRow& row,
                      const std::string& source) {
  std::string basis = "its profile row measured in " + source;
  std::string overstated = Overstated(pi, row.throughput, basis);
  if (!overstated.empty()) return overstated;
  if (pi.latency_ms > 0 && pi.latency_ms < row.latency_ms * (1 - 1e-6)) {
    return fmt::format(
        "declares a latency of {:.6g} ms for '{}', less than the {:.6g} ms "
        "of a batch of {} {}",
        pi.latency_ms, *pi.service, row.latency_ms, row.batch, basis);
  }
  return "";
}

// Checks gpus[`g`] of `deployment`: its id unique (`seen_ids`), its model,
// its layout legal, each instance's service and credit; adds each credit to
// its service in `report` and to the GPU's failure domain in `carried`.
// Returns InvalidArgument for a GPU model or profile it does not know.
// The credits (workload/replica_credit.h), each (service, GPU model,
// profile, row) asked once: an LLM's is a token simulation.
class Credits {
 public:
  Credits(const workload::Workload& workload,
          const profile::ProfileTable& profiles)
      : workload_(workload), profiles_(profiles) {}

  const workload::ReplicaCredit& Of(const workload::Service& service,
                                    const mig::GpuModel& gpu, int profile,
                                    workload::RowChoice choice) {
    auto key =
        std::tuple(service.name, gpu.name, profile, choice.batch, choice.procs);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      it = cache_
               .emplace(key, workload::CreditOf(workload_, service, profiles_,
                                                gpu, profile, choice))
               .first;
    }
    return it->second;
  }

 private:
  const workload::Workload& workload_;
  const profile::ProfileTable& profiles_;
  std::map<std::tuple<std::string, std::string, int, int, int>,
           workload::ReplicaCredit>
      cache_;
};

Status CheckGpu(const Deployment& deployment, size_t g,
                const workload::Workload& workload, const mig::GpuModel& gpu,
                Credits* credits, std::map<int, size_t>* seen_ids,
                std::vector<std::map<std::string, double>>* carried,
                ValidationReport* report) {
  const DeployedGpu& dg = deployment.gpus[g];
  std::string domain = FailureDomainOf(dg, workload);
  auto [it, fresh] = seen_ids->emplace(dg.id, g);
  if (!fresh) {
    report->problems.push_back(fmt::format(
        "gpu {}: duplicate id (gpus[{}] and gpus[{}])", dg.id, it->second, g));
  }
  const mig::GpuModel* model = &gpu;
  if (dg.gpu && *dg.gpu != gpu.name) {
    auto found = mig::GpuCatalog::Default().Find(*dg.gpu);
    if (!found.ok()) {
      return Status::InvalidArgument(fmt::format("{}: gpus[{}].gpu: {}",
                                                 deployment.source, g,
                                                 found.status().message()));
    }
    model = *found;
    // An idle GPU of another model is the fleet's (place lists every
    // inventory GPU); one that serves must be a model the workload offers.
    if (dg.Serving() &&
        std::none_of(
            workload.offers.begin(), workload.offers.end(),
            [&](const workload::GpuOffer& o) { return o.name == *dg.gpu; })) {
      report->problems.push_back(fmt::format(
          "gpu {}: a {}, which the workload does not offer", dg.id, *dg.gpu));
    }
  }
  const mig::GpuModel& gpu_model = *model;
  std::vector<mig::Instance> instances;
  for (size_t k = 0; k < dg.instances.size(); ++k) {
    const PlacedInstance& pi = dg.instances[k];
    int p = gpu_model.FindProfile(pi.profile);
    if (p < 0) {
      return Status::InvalidArgument(fmt::format(
          "{}: gpus[{}].instances[{}].profile: unknown profile '{}' on {}",
          deployment.source, g, k, pi.profile, gpu_model.name));
    }
    instances.push_back({p, pi.start});
  }
  std::string why;
  mig::Layout layout(instances);
  if (!IsLegal(gpu_model, layout, workload.mig, &why)) {
    report->problems.push_back(fmt::format("gpu {}: illegal layout {}: {}",
                                           dg.id, layout.ToString(gpu_model),
                                           why));
  }
  for (size_t k = 0; k < dg.instances.size(); ++k) {
    const PlacedInstance& pi = dg.instances[k];
    if (!pi.service) continue;
    std::string where =
        fmt::format("gpu {}: instance {}@{}", dg.id, pi.profile, pi.start);
    int s = workload.FindService(*pi.service);
    if (s < 0) {
      report->problems.push_back(
          fmt::format("{}: serves '{}', which the workload does not have",
                      where, *pi.service));
      continue;
    }
    const workload::Service& service = workload.services[s];
    const workload::ReplicaCredit& c = credits->Of(
        service, gpu_model, instances[k].profile, {pi.batch, pi.procs});
    if (c.rate <= 0) {
      // A replica that names no row is asked on the best one: say which
      // profile cannot hold the service, as optimize does.
      report->problems.push_back(
          where + ": " +
          (pi.batch == 0
               ? workload::CannotRunMessage(service, pi.profile, c.why_not)
               : c.why_not));
      continue;
    }
    // Export and the controller weight routes by what the file declares:
    // a replica that declares more than its ceiling draws more than it
    // serves. (For measured rows, not against the credit: a credit depends
    // on the service's rate, and a deployment checked at other rates keeps
    // the credits it had.)
    std::string overstated = Overstated(pi, c.ceiling, c.ceiling_basis);
    if (!overstated.empty()) {
      report->problems.push_back(where + ": " + overstated);
    }
    report->services[s].provided += c.rate;
    ++report->services[s].replicas;
    (*carried)[s][domain] += c.rate;
  }
  return Status::Ok();
}

// Checks each service's replicas and credit against what it requires,
// and what it keeps after a loss (survive).
void CheckServiceTotals(
    const workload::Workload& workload,
    const std::vector<std::map<std::string, double>>& carried,
    ValidationReport* report) {
  for (size_t j = 0; j < report->services.size(); ++j) {
    const ServiceReport& s = report->services[j];
    int least = workload.services[j].min_replicas;
    if (s.replicas < least) {
      report->problems.push_back(
          fmt::format("service '{}': {} replica(s), fewer than its "
                      "min_replicas {} ({}:{})",
                      s.name, s.replicas, least, workload.source,
                      workload.services[j].line));
    }
    if (s.provided < s.required * (1 - kRateTolerance)) {
      std::string headroom =
          workload.headroom > 0
              ? fmt::format(" with headroom {}", workload.headroom)
              : "";
      report->problems.push_back(fmt::format(
          "service '{}': {:.1f}% of its required throughput{} ({:.6g} of "
          "{:.6g} req/s)",
          s.name, 100 * s.satisfaction(), headroom, s.provided, s.required));
    }
    CheckSurvival(workload, j, s.provided, carried[j], report);
  }
}

}  // namespace

StatusOr<ValidationReport> Validate(const Deployment& deployment,
                                    const workload::Workload& workload,
                                    const profile::ProfileTable& profiles,
                                    const mig::GpuModel& gpu) {
  if (deployment.gpu != workload.gpu) {
    return Status::InvalidArgument(fmt::format(
        "{}: gpu: the deployment is for {}, the workload {} for {}",
        deployment.source, deployment.gpu, workload.source, workload.gpu));
  }
  ValidationReport report;
  for (const workload::Service& s : workload.services) {
    report.services.push_back({s.name, workload.Demand(s), 0, 0});
  }
  report.gpus = static_cast<int>(deployment.gpus.size());
  report.used_gpus = deployment.UsedGpus();
  if (deployment.summary && deployment.summary->router &&
      *deployment.summary->router != workload.router) {
    report.warnings.push_back(fmt::format(
        "summary.router: its credits assume router {0}, but {1} is served by "
        "router {2}: checked under {2}'s credits (serve --routing {2} shows "
        "its p99s)",
        queueing::RouterName(*deployment.summary->router), workload.source,
        queueing::RouterName(workload.router)));
  }
  std::map<int, size_t> seen_ids;
  // Per service, the credit each failure domain carries (survive).
  std::vector<std::map<std::string, double>> carried(workload.services.size());
  Credits credits(workload, profiles);
  for (size_t g = 0; g < deployment.gpus.size(); ++g) {
    MIGSERVE_RETURN_IF_ERROR(CheckGpu(deployment, g, workload, gpu, &credits,
                                      &seen_ids, &carried, &report));
  }
  CheckServiceTotals(workload, carried, &report);
  return report;
}

namespace {

// Calls `visit(gpu, instance, where)` for each replica of `deployment`, with
// "FILE: gpu ID: instance PROFILE@START" for messages; stops at the first
// error it returns.
Status EachReplica(
    const Deployment& deployment,
    const std::function<Status(const DeployedGpu&, const PlacedInstance&,
                               const std::string&)>& visit) {
  for (const DeployedGpu& g : deployment.gpus) {
    for (const PlacedInstance& pi : g.instances) {
      if (!pi.service) continue;
      MIGSERVE_RETURN_IF_ERROR(
          visit(g, pi,
                fmt::format("{}: gpu {}: instance {}@{}", deployment.source,
                            g.id, pi.profile, pi.start)));
    }
  }
  return Status::Ok();
}

}  // namespace

namespace {

// A replica credited by the token model: its credit is not a profile row's,
// and the workload's tables, calibration and margin are not in the file,
// but no credit exceeds what the slice could complete at its peaks
// (llm::PeakRequestRate), whatever they were. A model outside the shipped
// table is not checked.
// `deployment`'s services by name.
std::map<std::string, const workload::Service*> ServicesByName(
    const Deployment& deployment) {
  std::map<std::string, const workload::Service*> services;
  for (const workload::Service& s : deployment.services) services[s.name] = &s;
  return services;
}

Status CheckModelledCredit(const workload::Service& service,
                           const std::string& gpu_name,
                           const PlacedInstance& pi, const std::string& where) {
  const llm::LlmModel* model = service.llm_model.get();
  StatusOr<const mig::GpuModel*> gpu =
      mig::GpuCatalog::Default().Find(gpu_name);
  if (model == nullptr || !gpu.ok() || !service.tokens) return Status::Ok();
  int profile = (*gpu)->FindProfile(pi.profile);
  if (profile < 0) return Status::Ok();  // the layout check names it
  const int sequences =
      pi.batch > 0 ? pi.batch : llm::EngineOptions{}.max_batch;
  double ceiling =
      llm::PeakRequestRate(*model, **gpu, (*gpu)->profiles[profile], sequences,
                           service.tokens->output_tokens);
  std::string overstated = Overstated(
      pi, ceiling,
      fmt::format("req/s that {} sequences of {} complete on {} at its peaks",
                  sequences, service.model, pi.profile));
  if (overstated.empty()) return Status::Ok();
  return Status::InvalidArgument(where + ": " + overstated);
}

}  // namespace

Status CheckReplicaServices(const Deployment& deployment) {
  std::set<std::string> names;
  for (const workload::Service& s : deployment.services) names.insert(s.name);
  return EachReplica(deployment, [&](const DeployedGpu&,
                                     const PlacedInstance& pi,
                                     const std::string& where) {
    if (names.count(*pi.service) > 0) return Status::Ok();
    return Status::InvalidArgument(fmt::format(
        "{}: serves '{}', which is not in its services", where, *pi.service));
  });
}

Status CheckDeclaredThroughputs(const Deployment& deployment,
                                const profile::ProfileTable& profiles) {
  const auto services = ServicesByName(deployment);
  return EachReplica(deployment, [&](const DeployedGpu& g,
                                     const PlacedInstance& pi,
                                     const std::string& where) {
    const workload::Service& service = *services.at(*pi.service);
    switch (service.kind.traits().credit) {
      case workload::CreditSource::kProfileRows:
        break;
      case workload::CreditSource::kTokenModel:
        return Status::Ok();  // CheckModelledCredits' to hold
    }
    if (pi.batch == 0) return Status::Ok();
    const profile::ProfileRow* row = profile::FindRow(
        profiles, service.model, g.gpu.value_or(deployment.gpu), pi.profile,
        pi.batch, pi.procs);
    if (row == nullptr) {
      return Status::InvalidArgument(fmt::format(
          "{}: '{}' with batch {} and {} process(es) was not measured in {}",
          where, service.model, pi.batch, pi.procs, profiles.source));
    }
    std::string beyond = BeyondRow(pi, *row, profiles.source);
    if (beyond.empty()) return Status::Ok();
    return Status::InvalidArgument(where + ": " + beyond);
  });
}

Status CheckModelledCredits(const Deployment& deployment) {
  const auto services = ServicesByName(deployment);
  return EachReplica(deployment, [&](const DeployedGpu& g,
                                     const PlacedInstance& pi,
                                     const std::string& where) {
    auto service = services.find(*pi.service);
    if (service == services.end()) return Status::Ok();
    switch (service->second->kind.traits().credit) {
      case workload::CreditSource::kTokenModel:
        return CheckModelledCredit(*service->second,
                                   g.gpu.value_or(deployment.gpu), pi, where);
      case workload::CreditSource::kProfileRows:
        break;
    }
    // Against the shipped measurements, where they measured the point: a
    // point they lack cannot be disproved without -p, nor one that any of
    // them bears out (they measured some models twice, apart).
    if (pi.batch == 0) return Status::Ok();
    std::string beyond;
    for (const profile::ProfileTable& shipped : profile::ShippedProfiles()) {
      const profile::ProfileRow* row = profile::FindRow(
          shipped, service->second->model, g.gpu.value_or(deployment.gpu),
          pi.profile, pi.batch, pi.procs);
      if (row == nullptr) continue;
      std::string refuted = BeyondRow(pi, *row, shipped.source + " (built in)");
      if (refuted.empty()) return Status::Ok();
      if (beyond.empty()) beyond = refuted;
    }
    if (beyond.empty()) return Status::Ok();
    return Status::InvalidArgument(where + ": " + beyond);
  });
}

Status CheckDeclaredCredits(const Deployment& deployment,
                            const profile::ProfileTable* profiles) {
  if (profiles != nullptr) {
    MIGSERVE_RETURN_IF_ERROR(CheckDeclaredThroughputs(deployment, *profiles));
  }
  return CheckModelledCredits(deployment);
}

}  // namespace migserve::deployment
