#include "controller/safety_checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "cluster/apply.h"
#include "controller/max_flow.h"
#include "util/tolerance.h"

namespace migserve::controller {
namespace {

using cluster::Action;
using cluster::ActionKind;
using cluster::ClusterState;
using cluster::TransitionPlan;

constexpr double kTolerance = kCapacityTolerance;

// An instance an action touches on one GPU (none for an empty repartition);
// `whole_layout` for a repartition, which must also be ordered against every
// other repartition of the GPU.
struct Touch {
  int action;
  std::optional<mig::Instance> instance;
  bool whole_layout;
};

// Ancestor sets as bit rows: ancestors[a] has bit b if b must finish before
// a starts.
class Ancestors {
 public:
  explicit Ancestors(const TransitionPlan& plan,
                     const std::unordered_map<int, int>& index)
      : words_((plan.actions.size() + 63) / 64),
        bits_(plan.actions.size() * words_, 0) {
    for (size_t a = 0; a < plan.actions.size(); ++a) {
      for (int id : plan.actions[a].after) {
        int b = index.at(id);
        Set(a, b);
        for (size_t w = 0; w < words_; ++w) {
          bits_[a * words_ + w] |= bits_[b * words_ + w];
        }
      }
    }
  }
  bool Ordered(int a, int b) const { return Has(a, b) || Has(b, a); }

 private:
  void Set(size_t a, size_t b) {
    bits_[a * words_ + b / 64] |= 1ULL << (b % 64);
  }
  bool Has(size_t a, size_t b) const {
    return (bits_[a * words_ + b / 64] >> (b % 64)) & 1;
  }
  size_t words_;
  std::vector<uint64_t> bits_;
};

// Returns false (with problems added) if the plan's ids or `after` lists are
// malformed; fills `index` (id -> position).
bool CheckShape(const TransitionPlan& plan, std::unordered_map<int, int>* index,
                std::vector<std::string>* problems) {
  for (size_t k = 0; k < plan.actions.size(); ++k) {
    const Action& a = plan.actions[k];
    for (int id : a.after) {
      if (index->count(id) == 0) {
        problems->push_back(fmt::format(
            "action {}: after {}: not an action listed before", a.id, id));
        return false;
      }
    }
    if (!index->emplace(a.id, static_cast<int>(k)).second) {
      problems->push_back(fmt::format("action id {} is used twice", a.id));
      return false;
    }
  }
  return true;
}

void CheckOrdering(const TransitionPlan& plan, const Ancestors& ancestors,
                   std::vector<std::string>* problems) {
  std::map<cluster::GpuId, std::vector<Touch>> by_gpu;
  std::map<cluster::GpuId, const mig::GpuModel*> models;
  for (size_t k = 0; k < plan.actions.size(); ++k) {
    const Action& a = plan.actions[k];
    int i = static_cast<int>(k);
    models[a.at.gpu] = a.at.model;
    if (a.kind == ActionKind::kMigrate) models[a.to.gpu] = a.to.model;
    if (a.kind == ActionKind::kRepartition) {
      for (const mig::Instance& x : a.remove)
        by_gpu[a.at.gpu].push_back({i, x, true});
      for (const mig::Instance& x : a.add)
        by_gpu[a.at.gpu].push_back({i, x, true});
      if (a.remove.empty() && a.add.empty()) {
        by_gpu[a.at.gpu].push_back({i, std::nullopt, true});
      }
      continue;
    }
    by_gpu[a.at.gpu].push_back({i, a.at.instance, false});
    if (a.kind == ActionKind::kMigrate) {
      by_gpu[a.to.gpu].push_back({i, a.to.instance, false});
    }
  }
  std::set<std::pair<int, int>> reported;
  for (const auto& [id, touches] : by_gpu) {
    for (size_t x = 0; x < touches.size(); ++x) {
      for (size_t y = x + 1; y < touches.size(); ++y) {
        const Touch& p = touches[x];
        const Touch& q = touches[y];
        if (p.action == q.action) continue;
        bool both_layout = p.whole_layout && q.whole_layout;
        bool overlap = p.instance && q.instance &&
                       mig::Overlaps(*models[id], *p.instance, *q.instance);
        if (!both_layout && !overlap) continue;
        if (ancestors.Ordered(p.action, q.action)) continue;
        if (!reported.insert({p.action, q.action}).second) continue;
        problems->push_back(fmt::format(
            "actions {} and {} both touch GPU {} but the DAG does not order "
            "them",
            plan.actions[p.action].id, plan.actions[q.action].id,
            id.ToString()));
      }
    }
  }
}

// The actions one service's capacity depends on: its own and every action
// they wait for, transitively. A moment (a closure of "requires") weighs
// only the service's actions, and the closures of these actions are the
// moments' restrictions to them, so the worst moment is found among them.
struct Relevant {
  std::vector<int> actions;             // positions in the plan
  std::vector<std::vector<int>> after;  // per entry, entries it waits for
};

// `after` per action as positions in the plan.
std::vector<std::vector<int>> AfterPositions(
    const TransitionPlan& plan, const std::unordered_map<int, int>& index) {
  std::vector<std::vector<int>> after(plan.actions.size());
  for (size_t k = 0; k < plan.actions.size(); ++k) {
    for (int id : plan.actions[k].after) after[k].push_back(index.at(id));
  }
  return after;
}

// The actions `own` (a service's, positions in the plan) and what they wait
// for.
Relevant RelevantTo(const std::vector<std::vector<int>>& after,
                    const std::vector<int>& own) {
  Relevant out;
  std::unordered_map<int, int> local;  // position -> entry
  for (int k : own) {
    local.emplace(k, static_cast<int>(out.actions.size()));
    out.actions.push_back(k);
  }
  for (size_t e = 0; e < out.actions.size(); ++e) {
    for (int p : after[out.actions[e]]) {
      if (local.emplace(p, static_cast<int>(out.actions.size())).second) {
        out.actions.push_back(p);
      }
    }
  }
  out.after.resize(out.actions.size());
  for (size_t e = 0; e < out.actions.size(); ++e) {
    for (int p : after[out.actions[e]]) out.after[e].push_back(local.at(p));
  }
  return out;
}

// Returns the lowest capacity of `service` over every state the DAG allows,
// counting only GPUs for which `counts` is true (`initial`: what those hold
// before the plan).
template <typename Counts>
double WorstCapacity(const TransitionPlan& plan, const Relevant& relevant,
                     const std::string& service, double initial,
                     const Counts& counts) {
  // Node 2e: entry e started; 2e+1: entry e finished. A closure (a set
  // closed under "requires") is a reachable moment: finished requires
  // started, started requires every `after` finished. Maximum-weight closure
  // with weight loss(started) and -gain(finished) is the worst drop.
  int n = static_cast<int>(relevant.actions.size());
  int source = 2 * n, sink = 2 * n + 1;
  MaxFlow flow(2 * n + 2);
  double losses = 0;
  for (int e = 0; e < n; ++e) {
    const Action& a = plan.actions[relevant.actions[e]];
    flow.AddEdge(2 * e + 1, 2 * e, MaxFlow::kInfinity);
    for (int f : relevant.after[e]) {
      flow.AddEdge(2 * e, 2 * f + 1, MaxFlow::kInfinity);
    }
    if (a.kind == ActionKind::kRepartition || a.replica.service != service) {
      continue;
    }
    if (a.LossAtStart() > 0 && counts(a.at.gpu)) {
      flow.AddEdge(source, 2 * e, a.LossAtStart());
      losses += a.LossAtStart();
    }
    if (a.GainAtFinish() > 0 && counts(a.GainGpu())) {
      flow.AddEdge(2 * e + 1, sink, a.GainAtFinish());
    }
  }
  if (losses == 0) return initial;
  double worst_drop = losses - flow.Solve(source, sink);
  return initial - worst_drop;
}

// Adds a problem for each domain whose loss, at some moment the DAG allows,
// leaves a service below what it keeps after a loss.
void CheckAfterLoss(const ClusterState& initial, const TransitionPlan& plan,
                    const std::map<std::string, Relevant>& relevant,
                    const TransitionGoal& goal, SafetyReport* report) {
  if (!goal.survive) return;
  workload::FailureDomain kind = goal.survive->domain;
  std::map<std::string, double> start = initial.Capacity();
  auto by_domain = CapacityByDomain(initial, kind);
  for (const auto& [service, kept] : KeptAfterLoss(initial, goal)) {
    if (kept <= kTolerance) continue;
    // Per domain, the most the service can have there: what it has at the
    // start and every gain there. Outside a domain it keeps at least its
    // worst anywhere less that, so the domains that can hold the most go
    // first, and one that cannot go below the worst found is not cut.
    std::map<std::string, double> most = by_domain[service];
    for (int k : relevant.at(service).actions) {
      const Action& a = plan.actions[k];
      if (a.GainAtFinish() > 0 && a.replica.service == service) {
        most[DomainOf(a.GainGpu(), kind)] += a.GainAtFinish();
      }
    }
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [d, value] : most) order.emplace_back(-value, d);
    std::sort(order.begin(), order.end());
    double anywhere = report->worst_capacity[service];
    double worst = start[service];
    std::string worst_domain;
    for (const auto& [minus_most, d] : order) {
      if (anywhere + minus_most >= worst) continue;
      double outside = WorstCapacity(plan, relevant.at(service), service,
                                     start[service] - by_domain[service][d],
                                     [&, &d = d](const cluster::GpuId& g) {
                                       return DomainOf(g, kind) != d;
                                     });
      if (outside < worst) {
        worst = outside;
        worst_domain = d;
      }
    }
    report->worst_after_loss[service] = worst;
    if (worst < kept * (1 - kTolerance) - kTolerance) {
      report->problems.push_back(fmt::format(
          "service {} can drop to {:.6g} req/s in some execution order if {} "
          "{} is lost, below the {:.6g} it keeps after a loss",
          service, worst, workload::FailureDomainName(kind), worst_domain,
          kept));
    }
  }
}

}  // namespace

std::string DomainOf(const cluster::GpuId& gpu,
                     workload::FailureDomain domain) {
  return domain == workload::FailureDomain::kGpu ? gpu.ToString() : gpu.node;
}

std::map<std::string, std::map<std::string, double>> CapacityByDomain(
    const ClusterState& initial, workload::FailureDomain domain) {
  std::map<std::string, std::map<std::string, double>> by_domain;
  for (const cluster::GpuState& g : initial.gpus) {
    for (const auto& [service, value] : g.Capacity()) {
      by_domain[service][DomainOf(g.id, domain)] += value;
    }
  }
  return by_domain;
}

std::map<std::string, double> KeptAfterLoss(const ClusterState& initial,
                                            const TransitionGoal& goal) {
  std::map<std::string, double> kept;
  if (!goal.survive) return kept;
  std::map<std::string, double> start = initial.Capacity();
  auto by_domain = CapacityByDomain(initial, goal.survive->domain);
  for (const auto& [service, before] : goal.required_before) {
    double floor = goal.Floor(service);
    if (floor <= 0) continue;
    double largest = 0;
    for (const auto& [d, value] : by_domain[service]) {
      largest = std::max(largest, value);
    }
    kept[service] =
        std::min(goal.survive->keep * floor, start[service] - largest);
  }
  return kept;
}

double TransitionGoal::Floor(const std::string& service) const {
  auto before = required_before.find(service);
  auto after = required_after.find(service);
  if (before == required_before.end() || after == required_after.end())
    return 0;
  return std::min(before->second, after->second);
}

std::vector<std::string> KeepWhatIsLeft(
    const std::map<std::string, double>& capacity, TransitionGoal* goal) {
  std::vector<std::string> lowered;
  for (auto& [service, before] : goal->required_before) {
    auto it = capacity.find(service);
    double has = it == capacity.end() ? 0 : it->second;
    if (has >= goal->Floor(service) - kCapacityTolerance) continue;
    lowered.push_back(service);
    before = has;
  }
  return lowered;
}

std::vector<std::string> EndStateProblems(const ClusterState& state,
                                          const TransitionGoal& goal) {
  std::vector<std::string> problems;
  std::map<std::string, double> end = state.Capacity();
  for (const auto& [s, required] : goal.required_after) {
    if (end[s] < required - kTolerance) {
      problems.push_back(fmt::format(
          "service {} ends with {:.6g} of {:.6g} req/s", s, end[s], required));
    }
  }
  if (state.UsedGpus() > goal.target_gpus) {
    problems.push_back(
        fmt::format("{} GPUs serve replicas at the end; the target uses {}",
                    state.UsedGpus(), goal.target_gpus));
  }
  return problems;
}

SafetyReport CheckPlan(const ClusterState& initial, const TransitionPlan& plan,
                       const TransitionGoal& goal) {
  SafetyReport report;
  std::unordered_map<int, int> index;
  if (!CheckShape(plan, &index, &report.problems)) return report;
  CheckOrdering(plan, Ancestors(plan, index), &report.problems);

  ClusterState state = initial;
  for (const Action& a : plan.actions) {
    Status applied = cluster::ApplyAction(a, &state);
    if (!applied.ok()) {
      report.problems.push_back(applied.message());
      return report;
    }
  }

  std::map<std::string, double> start = initial.Capacity();
  std::set<std::string> services;
  for (const auto& [name, value] : goal.required_before) services.insert(name);
  for (const auto& [name, value] : goal.required_after) services.insert(name);
  std::vector<std::vector<int>> after = AfterPositions(plan, index);
  std::map<std::string, std::vector<int>> own;  // per service, its actions
  for (size_t k = 0; k < plan.actions.size(); ++k) {
    const Action& a = plan.actions[k];
    if (a.kind != ActionKind::kRepartition) {
      own[a.replica.service].push_back(static_cast<int>(k));
    }
  }
  std::map<std::string, Relevant> relevant;
  for (const std::string& s : services) {
    relevant[s] = RelevantTo(after, own[s]);
    double worst = WorstCapacity(plan, relevant[s], s, start[s],
                                 [](const cluster::GpuId&) { return true; });
    report.worst_capacity[s] = worst;
    double floor = goal.Floor(s);
    if (worst < floor * (1 - kTolerance) - kTolerance) {
      report.problems.push_back(fmt::format(
          "service {} can drop to {:.6g} req/s in some execution order, below "
          "min(before, after) = {:.6g}",
          s, worst, floor));
    }
  }

  CheckAfterLoss(initial, plan, relevant, goal, &report);

  for (std::string& p : EndStateProblems(state, goal)) {
    report.problems.push_back(std::move(p));
  }
  return report;
}

}  // namespace migserve::controller
