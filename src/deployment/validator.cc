#include "deployment/validator.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "llm/llm_credit.h"
#include "mig/gpu_catalog.h"
#include "mig/layout.h"
#include "profile/capacity.h"
#include "queueing/capacity_model.h"
#include "util/tolerance.h"
#include "workload/measurement_gaps.h"

namespace migserve::deployment {
namespace {

// Returns the throughput the profiles credit `instance` with for `service`,
// or a problem saying why it may not serve there.
std::string CreditInstance(const PlacedInstance& instance,
                           const workload::Service& service,
                           const workload::Workload& workload,
                           const profile::ProfileTable& profiles,
                           const mig::GpuModel& gpu, int profile_index,
                           double* credit) {
  const mig::Profile& profile = gpu.profiles[profile_index];
  queueing::ServiceTerms terms = workload.TermsOf(service);
  const profile::CapacityLimits& limits = terms.limits;
  if (instance.batch == 0) {
    queueing::Credit best = queueing::BestCredit(profiles, gpu, profile_index,
                                                 service.model, terms);
    if (best.row == nullptr) {
      if (!profiles.Measures(service.model, gpu.name, profile.name)) {
        return workload::NotMeasuredMessage(service, profile.name);
      }
      return fmt::format(
          "service '{}' cannot run on {} within its SLO (latency limit {:.6g} "
          "ms, at most {} process(es))",
          service.name, profile.name, limits.latency_limit_ms,
          limits.max_procs);
    }
    *credit = best.capacity;
    return "";
  }
  const profile::ProfileRow* row =
      profile::FindRow(profiles, service.model, gpu.name, profile.name,
                       instance.batch, instance.procs);
  if (row == nullptr || row->throughput <= 0) {
    return fmt::format(
        "no measured point of '{}' on {} with batch {} and {} "
        "process(es)",
        service.model, profile.name, instance.batch, instance.procs);
  }
  if (row->procs > limits.max_procs) {
    return fmt::format("{} processes exceed max_procs {}", row->procs,
                       limits.max_procs);
  }
  if (row->latency_ms > limits.latency_limit_ms) {
    return fmt::format(
        "batch {} has latency {} ms, over the limit of {:.6g} ms for service "
        "'{}'",
        row->batch, row->latency_ms, limits.latency_limit_ms, service.name);
  }
  if (!profile::RowFits(*row, profile, limits)) {
    return fmt::format("batch {} needs {} GB, more than {} has", row->batch,
                       *row->memory_gb, profile.name);
  }
  *credit = queueing::RowCapacity(profiles, *row, terms);
  if (*credit <= 0) {
    return fmt::format(
        "batch {} cannot keep the p99 latency of service '{}' within its SLO "
        "of {} ms (capacity_model: p99)",
        row->batch, service.name, service.latency_ms);
  }
  return "";
}

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
      service.throughput, workload.source));
}

// The most a replica of `model` on `pi`'s profile of `gpu` can be credited
// with: the throughput its profile row measured (the row of its batch and
// processes, or the best row when it names none); 0 if none is measured.
double MeasuredCeiling(const profile::ProfileTable& profiles,
                       const std::string& model, const std::string& gpu,
                       const PlacedInstance& pi) {
  double most = 0;
  for (const profile::ProfileRow& row : profiles.rows) {
    if (row.model == model && row.gpu == gpu && row.profile == pi.profile &&
        (pi.batch == 0 || (row.batch == pi.batch && row.procs == pi.procs))) {
      most = std::max(most, row.throughput);
    }
  }
  return most;
}

// What is wrong with replica `pi` declaring more than `measured`, the
// throughput its profile row in `source` measured; "" if it does not.
std::string Overstated(const PlacedInstance& pi, double measured,
                       const std::string& source) {
  if (pi.credit <= measured * (1 + kRateTolerance)) return "";
  return fmt::format(
      "declares {:.6g} req/s for '{}', more than the {:.6g} its profile row "
      "measured in {}",
      pi.credit, *pi.service, measured, source);
}

// Checks gpus[`g`] of `deployment`: its id unique (`seen_ids`), its model,
// its layout legal, each instance's service and credit; adds each credit to
// its service in `report` and to the GPU's failure domain in `carried`.
// Returns InvalidArgument for a GPU model or profile it does not know.
// The credits of LLM services (docs/llm.md; corrected by the workload's
// measurements), each (service, GPU model, profile) computed once.
class LlmCredits {
 public:
  explicit LlmCredits(const workload::Workload& workload)
      : workload_(workload) {}

  const llm::LlmCredit& Of(const workload::Service& service,
                           const mig::GpuModel& gpu, int profile) {
    auto key = std::tuple(service.name, gpu.name, profile);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      it = cache_
               .emplace(key, workload_.LlmCreditOf(service, gpu,
                                                   gpu.profiles[profile]))
               .first;
    }
    return it->second;
  }

 private:
  const workload::Workload& workload_;
  std::map<std::tuple<std::string, std::string, int>, llm::LlmCredit> cache_;
};

// An LLM replica's credit: the capacity model's, which it may not exceed in
// what it declares; "" or what is wrong.
std::string CreditLlmInstance(const PlacedInstance& pi,
                              const workload::Service& service,
                              const mig::GpuModel& gpu, int profile,
                              LlmCredits* llm, double* credit) {
  const llm::LlmCredit& c = llm->Of(service, gpu, profile);
  if (c.rate <= 0) return c.why;
  *credit = c.rate;
  if (pi.credit > c.rate * (1 + 1e-6) + 1e-9) {
    return fmt::format(
        "declares {:.6g} req/s, more than its LLM credit of {:.6g} req/s",
        pi.credit, c.rate);
  }
  return "";
}

Status CheckGpu(const Deployment& deployment, size_t g,
                const workload::Workload& workload,
                const profile::ProfileTable& profiles, const mig::GpuModel& gpu,
                LlmCredits* llm, std::map<int, size_t>* seen_ids,
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
    double credit = 0;
    if (workload.services[s].llm) {
      std::string problem =
          CreditLlmInstance(pi, workload.services[s], gpu_model,
                            instances[k].profile, llm, &credit);
      if (!problem.empty()) report->problems.push_back(where + ": " + problem);
      report->services[s].provided += credit;
      ++report->services[s].replicas;
      (*carried)[s][domain] += credit;
      continue;
    }
    std::string problem =
        CreditInstance(pi, workload.services[s], workload, profiles, gpu_model,
                       instances[k].profile, &credit);
    if (!problem.empty()) {
      report->problems.push_back(where + ": " + problem);
      continue;
    }
    // Export and the controller weight routes by what the file declares:
    // a replica that declares more than its row measured draws more than it
    // serves. (Not against `credit`: a credit depends on the service's rate,
    // and a deployment checked at other rates keeps the credits it had.)
    std::string overstated =
        Overstated(pi,
                   MeasuredCeiling(profiles, workload.services[s].model,
                                   gpu_model.name, pi),
                   profiles.source);
    if (!overstated.empty()) {
      report->problems.push_back(where + ": " + overstated);
    }
    report->services[s].provided += credit;
    ++report->services[s].replicas;
    (*carried)[s][domain] += credit;
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
  LlmCredits llm(workload);
  for (size_t g = 0; g < deployment.gpus.size(); ++g) {
    MIGSERVE_RETURN_IF_ERROR(CheckGpu(deployment, g, workload, profiles, gpu,
                                      &llm, &seen_ids, &carried, &report));
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
  std::map<std::string, std::string> models;
  std::set<std::string> modelled;  // LLM services: no profile row
  for (const workload::Service& s : deployment.services) {
    models[s.name] = s.model;
    if (s.llm) modelled.insert(s.name);
  }
  return EachReplica(deployment, [&](const DeployedGpu& g,
                                     const PlacedInstance& pi,
                                     const std::string& where) {
    if (pi.batch == 0 || modelled.count(*pi.service) > 0) return Status::Ok();
    const std::string& model = models[*pi.service];
    const profile::ProfileRow* row =
        profile::FindRow(profiles, model, g.gpu.value_or(deployment.gpu),
                         pi.profile, pi.batch, pi.procs);
    if (row == nullptr) {
      return Status::InvalidArgument(fmt::format(
          "{}: '{}' with batch {} and {} process(es) was not measured in {}",
          where, model, pi.batch, pi.procs, profiles.source));
    }
    std::string overstated = Overstated(pi, row->throughput, profiles.source);
    if (overstated.empty()) return Status::Ok();
    return Status::InvalidArgument(where + ": " + overstated);
  });
}

}  // namespace migserve::deployment
