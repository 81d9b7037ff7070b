// Surviving a failure (`survive: {domain, keep}`, docs/capacity.md,
// "Redundancy"): after losing any one GPU or node, every service keeps
// `keep` x its required rate. Any optimizer's deployment is made to survive
// the same way: its services are spread over the failure domains, and a
// service whose worst loss leaves it short has its required rate raised by
// that loss (its spare) and the workload is solved again.
#ifndef MIGSERVE_OPTIMIZER_SURVIVE_H_
#define MIGSERVE_OPTIMIZER_SURVIVE_H_

#include <algorithm>
#include <string>
#include <vector>

#include "deployment/gpu_config.h"
#include "optimizer/deadline.h"
#include "optimizer/optimizer.h"
#include "optimizer/options.h"
#include "util/status_or.h"
#include "workload/capacity_matrix.h"
#include "workload/workload.h"

namespace migserve::optimizer {

// The failure domains of a deployment's configs.
struct FailureDomains {
  workload::FailureDomain domain = workload::FailureDomain::kGpu;
  std::vector<int> of;             // per config, its domain
  std::vector<std::string> nodes;  // per domain, its node (node domain)
  // Per config, its device index on its node: only when the configs are
  // placed on a fleet's nodes (SolveOptions::nodes).
  std::vector<int> index;

  // "gpu <config>", or "node <name>".
  std::string Name(int d) const;
};

// The failure domains of `count` configs in deployment order: each config
// its own (gpu); or its node (node): with `nodes`, the configs spread over
// the fleet's nodes, each to the node holding the fewest so far (first in
// inventory order on a tie), so that losing a node costs as little as the
// fleet allows (spare nodes only for what the others cannot hold, as few as
// do, in order); without, nodes of deployment::kUnplacedGpusPerNode filled
// in order (the unplaced convention). FailedPrecondition if `nodes` hold
// fewer GPUs than `count`.
StatusOr<FailureDomains> FailureDomainsOf(int count,
                                          workload::FailureDomain domain,
                                          const std::vector<FleetNode>& nodes);

// Names each GPU of `deployment` (configs in order) its node and device
// index when `domains` place them on a fleet's nodes; else leaves them.
void PlaceOnNodes(const FailureDomains& domains,
                  deployment::Deployment* deployment);

// Reassigns the services of `configs` among the instances of each profile
// so that every service's credit is spread over the failure domains
// `domains` (per config) as evenly as the instances allow (largest credits
// first, each to the domain that carries the least of its service). Each
// service keeps the profiles of its instances, hence its capacity.
void SpreadServices(const std::vector<int>& domains,
                    const workload::CapacityMatrix& caps,
                    std::vector<deployment::GpuConfig>* configs);

// What losing one domain costs a service: the most credit one domain
// carries, req/s, and that domain (-1 if the service has no replica).
struct WorstLoss {
  double credit = 0;
  int domain = -1;
};

// Per service of `caps`, its worst loss over `domains`.
std::vector<WorstLoss> WorstLosses(
    const std::vector<deployment::GpuConfig>& configs,
    const std::vector<int>& domains, const workload::CapacityMatrix& caps);

// The rounds of raised rates that make a deployment survive, whatever
// solves each round: solve for required(), Check() the answer, and while it
// is short, Next() says whether to solve again.
class SurviveRounds {
 public:
  // One GPU type's part of a round's answer: its capacities, its configs
  // and their failure domains.
  struct Part {
    const workload::CapacityMatrix* caps;
    std::vector<deployment::GpuConfig>* configs;
    const FailureDomains* domains;
  };

  // `caps` per GPU type (one for a plain solve) of `workload`'s services;
  // `workload` outlives the rounds. The first round requires of each service
  // its demand and at least keep x its rate plus the least credit one of its
  // instances can have on any type (a loss no surviving deployment
  // escapes, so the first round's bound is one).
  SurviveRounds(const workload::Workload& workload,
                const std::vector<const workload::CapacityMatrix*>& caps);

  const std::vector<double>& required() const { return required_; }
  int round() const { return round_; }

  // Spreads each part's services over its domains (SpreadServices; the
  // parts' domains are disjoint) and raises every service that losing its
  // worst domain leaves below keep x its rate to keep plus that loss.
  // Returns the first such, said, or "" when every loss is survived.
  std::string Check(const std::vector<Part>& parts);

  // After a short Check: "" to solve again (said through
  // options.progress), or why the search ends (the last round, or the
  // time). Counts the round.
  std::string Next(const std::string& short_of, Clock::time_point deadline,
                   const SolveOptions& options);

  // The MILP gap of a later round, whose first round's bound is `bound`
  // (in cost; `unit`: the cheapest GPU's): a later round repairs, its own
  // optimum is not survive's, so within one GPU of its bound is enough (a
  // proof there can take minutes); never below the `given` gap.
  static double RepairGap(double given, double bound, double unit) {
    return std::max(given, unit / (bound + unit));
  }

 private:
  const workload::Workload& workload_;
  std::vector<double> required_;
  int round_ = 1;
};

// What SolveToSurvive found: the last round's solution, its services
// spread, and a lower bound that holds for every deployment that survives.
struct SurvivingSolution {
  Solution solution;
  FailureDomains domains;  // of the solution's configs
  int lower_bound = 0;
  int rounds = 0;
};

// Solves `problem` (whose workload has `survive`) with `optimizer`: the
// first round requires of each service its demand and at least keep x its
// rate plus one instance's credit (every deployment that survives has that
// much, so the first round's bound is a bound); each later round raises a
// short service to keep x its rate plus the loss that left it short, until
// every loss is survived or the time limit ends the search (kInfeasible,
// naming the service and the domain).
SurvivingSolution SolveToSurvive(Optimizer& optimizer, const Problem& problem,
                                 const SolveOptions& options);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_SURVIVE_H_
