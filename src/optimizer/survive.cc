#include "optimizer/survive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

#include "optimizer/deadline.h"
#include "util/tolerance.h"

namespace migserve::optimizer {
namespace {

// Rounds of raised rates before a search that cannot survive gives up: each
// raises every short service by what it lost, so a deployment that can
// survive is found in two or three.
constexpr int kMaxRounds = 12;

// The least credit one instance of service `j` can have on any of the GPU
// types of `caps`: a loss no deployment of it escapes.
double LeastInstanceCredit(
    const std::vector<const workload::CapacityMatrix*>& caps, int j) {
  double least = 0;
  for (const workload::CapacityMatrix* c : caps) {
    for (int p = 0; p < c->num_profiles(); ++p) {
      double credit = c->throughput(j, p);
      if (credit > 0 && (least == 0 || credit < least)) least = credit;
    }
  }
  return least;
}

// SolveToSurvive's rounds, by `deadline`.
SurvivingSolution Rounds(Optimizer& optimizer, const Problem& problem,
                         const SolveOptions& options,
                         Clock::time_point deadline) {
  const workload::Workload& w = problem.workload;
  const workload::CapacityMatrix& caps = problem.caps;
  SurviveRounds rounds(w, {&caps});
  SurvivingSolution out;
  while (true) {
    out.rounds = rounds.round();
    workload::CapacityMatrix raised = caps.WithRequired(rounds.required());
    Problem round(w, problem.gpu, raised);
    SolveOptions limited = options;
    // The first round gets half the time, so that later ones have some:
    // at thousands of GPUs a proof of its optimum can take all of it, and
    // its answer may not survive anyway.
    limited.time_limit_s =
        std::max(SecondsLeft(deadline), 0.0) / (out.rounds == 1 ? 2 : 1);
    if (out.rounds > 1) {
      limited.milp.gap =
          SurviveRounds::RepairGap(options.milp.gap, out.lower_bound, 1);
    }
    out.solution = optimizer.Solve(
        round, deployment::CompletionRates(caps.num_services(), 0.0), limited);
    if (out.solution.outcome == Outcome::kInfeasible) return out;
    if (out.rounds == 1)
      out.lower_bound = ProvenLowerBound(round, out.solution);
    StatusOr<FailureDomains> domains =
        FailureDomainsOf(static_cast<int>(out.solution.configs.size()),
                         w.survive->domain, options.nodes);
    if (!domains.ok()) {
      out.solution = Infeasible(domains.status().message());
      return out;
    }
    out.domains = *std::move(domains);
    std::string short_of =
        rounds.Check({{&caps, &out.solution.configs, &out.domains}});
    if (short_of.empty()) return out;
    if (std::string end = rounds.Next(short_of, deadline, options);
        !end.empty()) {
      out.solution = Infeasible(end);
      return out;
    }
  }
}

}  // namespace

std::string FailureDomains::Name(int d) const {
  return domain == workload::FailureDomain::kGpu ? fmt::format("gpu {}", d)
                                                 : "node " + nodes[d];
}

StatusOr<FailureDomains> FailureDomainsOf(int count,
                                          workload::FailureDomain domain,
                                          const std::vector<FleetNode>& nodes) {
  FailureDomains out;
  out.domain = domain;
  out.of.resize(count);
  if (domain == workload::FailureDomain::kGpu) {
    for (int g = 0; g < count; ++g) out.of[g] = g;
    return out;
  }
  if (nodes.empty()) {
    for (int g = 0; g < count; ++g) {
      out.of[g] = g / deployment::kUnplacedGpusPerNode;
      if (g % deployment::kUnplacedGpusPerNode == 0) {
        out.nodes.push_back(deployment::UnplacedNode(g));
      }
    }
    return out;
  }
  // Spare nodes open in order, as few as hold what the others cannot; the
  // others fill first.
  int left = count;
  for (const FleetNode& n : nodes) left -= n.spare ? 0 : n.gpus;
  std::vector<bool> open(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    open[n] = !nodes[n].spare || left > 0;
    if (nodes[n].spare && left > 0) left -= nodes[n].gpus;
  }
  std::vector<int> used(nodes.size(), 0);
  out.index.resize(count);
  for (int g = 0; g < count; ++g) {
    int best = -1;
    auto better = [&](size_t n) {
      if (!open[n] || used[n] >= nodes[n].gpus) return false;
      if (best < 0) return true;
      return std::pair{nodes[n].spare, used[n]} <
             std::pair{nodes[best].spare, used[best]};
    };
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (better(n)) best = static_cast<int>(n);
    }
    if (best < 0) {
      int had = 0;
      for (const FleetNode& n : nodes) had += n.gpus;
      return Status::FailedPrecondition(fmt::format(
          "the deployment needs {} GPUs but the fleet's {} node(s) have {}",
          count, nodes.size(), had));
    }
    out.of[g] = best;
    out.index[g] = used[best]++;
  }
  for (const FleetNode& n : nodes) out.nodes.push_back(n.name);
  return out;
}

void PlaceOnNodes(const FailureDomains& domains,
                  deployment::Deployment* deployment) {
  if (domains.index.empty()) return;
  for (size_t g = 0; g < deployment->gpus.size(); ++g) {
    deployment->gpus[g].node = domains.nodes[domains.of[g]];
    deployment->gpus[g].index = domains.index[g];
  }
}

void SpreadServices(const std::vector<int>& domains,
                    const workload::CapacityMatrix& caps,
                    std::vector<deployment::GpuConfig>* configs) {
  struct Replica {
    double credit;
    int service;
    int profile;
  };
  struct Slot {
    int config;
    int instance;
  };
  std::vector<Replica> replicas;
  // Per profile, per domain, its instances, the last one taken first.
  std::map<int, std::map<int, std::vector<Slot>>> free;
  for (int g = static_cast<int>(configs->size()) - 1; g >= 0; --g) {
    deployment::GpuConfig& c = (*configs)[g];
    const std::vector<mig::Instance>& instances = c.layout.instances();
    for (int k = static_cast<int>(c.services.size()) - 1; k >= 0; --k) {
      int p = instances[k].profile;
      free[p][domains[g]].push_back({g, k});
      int j = c.services[k];
      if (j == deployment::kIdle) continue;
      replicas.push_back({caps.throughput(j, p), j, p});
      c.services[k] = deployment::kIdle;
    }
  }
  std::sort(replicas.begin(), replicas.end(),
            [](const Replica& a, const Replica& b) {
              if (a.credit != b.credit) return a.credit > b.credit;
              if (a.service != b.service) return a.service < b.service;
              return a.profile < b.profile;
            });
  std::vector<std::unordered_map<int, double>> load(caps.num_services());
  for (const Replica& r : replicas) {
    std::map<int, std::vector<Slot>>& by_domain = free[r.profile];
    auto best = by_domain.end();
    double best_load = 0;
    for (auto it = by_domain.begin(); it != by_domain.end(); ++it) {
      if (it->second.empty()) continue;
      auto carried = load[r.service].find(it->first);
      double l = carried == load[r.service].end() ? 0 : carried->second;
      if (best == by_domain.end() || l < best_load ||
          (l == best_load && it->second.size() > best->second.size())) {
        best = it;
        best_load = l;
      }
    }
    Slot slot = best->second.back();
    best->second.pop_back();
    (*configs)[slot.config].services[slot.instance] = r.service;
    load[r.service][best->first] += r.credit;
  }
}

std::vector<WorstLoss> WorstLosses(
    const std::vector<deployment::GpuConfig>& configs,
    const std::vector<int>& domains, const workload::CapacityMatrix& caps) {
  std::vector<std::unordered_map<int, double>> load(caps.num_services());
  for (size_t g = 0; g < configs.size(); ++g) {
    const std::vector<mig::Instance>& instances = configs[g].layout.instances();
    for (size_t k = 0; k < configs[g].services.size(); ++k) {
      int j = configs[g].services[k];
      if (j == deployment::kIdle) continue;
      load[j][domains[g]] += caps.throughput(j, instances[k].profile);
    }
  }
  std::vector<WorstLoss> worst(caps.num_services());
  for (int j = 0; j < caps.num_services(); ++j) {
    for (const auto& [domain, credit] : load[j]) {
      if (credit > worst[j].credit ||
          (credit == worst[j].credit && domain < worst[j].domain)) {
        worst[j] = {credit, domain};
      }
    }
  }
  return worst;
}

SurviveRounds::SurviveRounds(
    const workload::Workload& workload,
    const std::vector<const workload::CapacityMatrix*>& caps)
    : workload_(workload) {
  const workload::CapacityMatrix& first = *caps.front();
  required_.resize(first.num_services());
  for (int j = 0; j < first.num_services(); ++j) {
    required_[j] =
        std::max(first.required(j), workload.Kept(workload.services[j]) +
                                        LeastInstanceCredit(caps, j));
  }
}

std::string SurviveRounds::Check(const std::vector<Part>& parts) {
  const workload::Workload& w = workload_;
  std::vector<double> served(required_.size(), 0.0);
  std::vector<WorstLoss> worst(required_.size());
  std::vector<const FailureDomains*> where(required_.size(),
                                           parts.front().domains);
  for (const Part& part : parts) {
    SpreadServices(part.domains->of, *part.caps, part.configs);
    deployment::CompletionRates rates =
        deployment::Completion(*part.configs, *part.caps);
    std::vector<WorstLoss> losses =
        WorstLosses(*part.configs, part.domains->of, *part.caps);
    for (size_t j = 0; j < required_.size(); ++j) {
      served[j] += rates[j] * part.caps->required(j);
      if (losses[j].credit > worst[j].credit) {
        worst[j] = losses[j];
        where[j] = part.domains;
      }
    }
  }
  std::string short_of;
  for (size_t j = 0; j < required_.size(); ++j) {
    double kept = w.Kept(w.services[j]);
    double left = served[j] - worst[j].credit;
    if (left >= kept * (1 - kRateTolerance)) continue;
    required_[j] = kept + worst[j].credit;
    if (short_of.empty()) {
      short_of = fmt::format(
          "survive: losing {} leaves '{}' {:.6g} of the {:.6g} req/s it "
          "must keep",
          where[j]->Name(worst[j].domain), w.services[j].name,
          std::abs(left) < 1e-9 ? 0.0 : left, kept);
    }
  }
  return short_of;
}

std::string SurviveRounds::Next(const std::string& short_of,
                                Clock::time_point deadline,
                                const SolveOptions& options) {
  if (SecondsLeft(deadline) <= 0) {
    return fmt::format("{} after {} round(s) of spare capacity; {}", short_of,
                       round_,
                       Interrupted() ? "interrupted" : "raise --time-limit");
  }
  if (round_ == kMaxRounds) {
    // More time would not help: the rounds are what ran out.
    return fmt::format(
        "{} after {} rounds of spare capacity, the most it tries; lower "
        "keep, or give the failure domains more room (with domain: node, "
        "an --inventory of more nodes)",
        short_of, round_);
  }
  if (options.progress) {
    options.progress(
        fmt::format("{} (round {}); solving again", short_of, round_));
  }
  ++round_;
  return "";
}

SurvivingSolution SolveToSurvive(Optimizer& optimizer, const Problem& problem,
                                 const SolveOptions& options) {
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  if (problem.workload.survive->domain == workload::FailureDomain::kNode &&
      options.nodes.empty() && options.progress) {
    options.progress(fmt::format(
        "survive: domain node without an inventory: assuming nodes of {} "
        "GPUs, filled in deployment order (give --inventory for your nodes)",
        deployment::kUnplacedGpusPerNode));
  }
  const bool spare = optimizer.PricesSpare(options);
  // The spare model's rounds get half the time: at a thousand GPUs its
  // first round can take all of it (40 services on 1,022 GPUs: 60 s, one
  // GPU from its bound), where the rounds alone answer in a second.
  SurvivingSolution out =
      Rounds(optimizer, problem, options,
             spare ? SecondsFromNow(options.time_limit_s / 2) : deadline);
  bool answered = out.solution.outcome != Outcome::kInfeasible;
  if (!spare || SecondsLeft(deadline) <= 0 ||
      (answered &&
       static_cast<int>(out.solution.configs.size()) <= out.lower_bound)) {
    return out;
  }
  // The rounds depend on their first answer: a model that prices the spare
  // can start where a later round's raise overshoots. Keep the better of
  // both; the spare model's bound is the stronger, and both are bounds.
  SolveOptions without = options;
  without.milp.spare = false;
  SurvivingSolution other = Rounds(optimizer, problem, without, deadline);
  if (other.solution.outcome != Outcome::kInfeasible &&
      (!answered ||
       other.solution.configs.size() < out.solution.configs.size())) {
    other.lower_bound = std::max(other.lower_bound, out.lower_bound);
    other.rounds += out.rounds;
    return other;
  }
  out.rounds += other.rounds;
  return out;
}

}  // namespace migserve::optimizer
