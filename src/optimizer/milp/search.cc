#include "optimizer/milp/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <coin/CbcModel.hpp>
#include <random>

#include "optimizer/milp/cbc_run.h"
#include "optimizer/milp/dive.h"
#include "util/interrupt.h"
#include "util/tolerance.h"

namespace migserve::optimizer::milp {

using deployment::GpuConfig;

Outcome ModelAnswer::outcome() const {
  if (optimal) return Outcome::kOptimal;
  if (Interrupted()) return Outcome::kTimeLimit;
  return close || !timed_out ? Outcome::kFeasible : Outcome::kTimeLimit;
}

MilpInfo ModelAnswer::Info() const {
  MilpInfo info;
  info.lp_bound = root.lp;
  info.cut_bound = root.cuts;
  info.nodes = nodes;
  info.incumbent = incumbent;
  info.phase_seconds = phases;
  return info;
}

LpBounds SolveRoot(const std::vector<ServiceColumns>& services,
                   const MilpOptions& options, MigModel* model) {
  model->solver.initialSolve();
  if (!model->solver.isProvenOptimal()) return {};
  LpBounds bounds;
  bounds.lp = model->solver.getObjValue();
  AddServiceCuts(services, options.cut_rounds, &model->solver);
  bounds.cuts = model->solver.getObjValue();
  return bounds;
}

MilpSearch::MilpSearch(MigModel* model,
                       const deployment::CompletionRates& initial,
                       const SolveOptions& options, Clock::time_point deadline)
    : model_(model),
      options_(options),
      deadline_(deadline),
      services_(ServiceColumnsOf(*model, initial)),
      priorities_(model->columns, 2),
      cost_(model->types[0].cost),
      best_(model->columns, 0.0),
      best_cost_(COIN_DBL_MAX) {
  for (const MigColumns& t : model->types) {
    one_cost_ &= t.cost == cost_;
    for (int c = t.y.first; c < t.y.end(); ++c) priorities_[c] = 1;
  }
}

ModelAnswer MilpSearch::Run(std::vector<std::vector<GpuConfig>> seed) {
  Clock::time_point phase = Clock::now();
  answer_.root = SolveRoot(services_, options_.milp, model_);
  answer_.bound = answer_.root.cuts;
  answer_.phases.root = SecondsSince(phase);
  phase = Clock::now();
  if (!seed.empty()) {
    best_cost_ = FleetCost(*model_, seed);
    for (size_t t = 0; t < seed.size(); ++t) {
      AddConfigColumns(model_->types[t], seed[t], &best_);
    }
    answer_.incumbent = "seed";
  }
  begin_ = Clock::now();
  Dives();
  // Whatever the dives did, CBC starts from a deployment.
  if (!HaveBest()) {
    if (auto start = OneServiceGpus(*model_, services_)) {
      double start_cost = Objective(*model_, *start);
      Adopt(std::move(*start), start_cost, "one-service");
    }
  }
  answer_.phases.incumbent = SecondsSince(phase);
  phase = Clock::now();
  if (Proven()) {
    answer_.optimal = true;
    answer_.bound = best_cost_;
  } else if (!Close()) {
    CbcRuns();
  }
  answer_.phases.search = SecondsSince(phase);
  answer_.close = !answer_.optimal && Close();
  if (HaveBest()) {
    for (const MigColumns& t : model_->types) {
      answer_.configs.push_back(PlaceMigColumns(t, best_.data()));
    }
  }
  return std::move(answer_);
}

bool MilpSearch::HaveBest() const { return best_cost_ < COIN_DBL_MAX; }

bool MilpSearch::Adopt(std::vector<double> x, double cost, const char* by) {
  if (cost >= best_cost_ - kCostTolerance) return false;
  best_ = std::move(x);
  best_cost_ = cost;
  answer_.incumbent = by;
  return true;
}

void MilpSearch::Report(const std::string& what) const {
  if (!options_.progress) return;
  options_.progress(fmt::format(
      "milp: {:.1f} s: {}; best {}, bound {:g}", SecondsSince(begin_), what,
      HaveBest() ? fmt::format("{:g}", best_cost_) : std::string("none"),
      std::ceil(answer_.bound - kCostTolerance)));
}

double MilpSearch::Better() const {
  return one_cost_ ? best_cost_ - cost_ : best_cost_ - kCostTolerance;
}

bool MilpSearch::Proven() const {
  return one_cost_ &&
         best_cost_ <=
             std::ceil(answer_.root.cuts / cost_ - kCostTolerance) * cost_ +
                 kCostTolerance;
}

bool MilpSearch::Close() const {
  if (!HaveBest()) return false;
  double bound = one_cost_
                     ? std::ceil(answer_.bound / cost_ - kCostTolerance) * cost_
                     : answer_.bound;
  return best_cost_ - bound <=
         options_.milp.gap * best_cost_ + kRoundingTolerance;
}

// Dives, the first by the rule and the others randomized, until
// `dive_patience` in a row find nothing better (the time limit is only a
// safety net: a dive it ends makes the search's answer the clock's).
void MilpSearch::Dives() {
  std::mt19937 rng(options_.seed);
  for (int d = 0, idle = 0; d < options_.milp.dives && !Proven() && !Close() &&
                            idle < options_.milp.dive_patience;
       ++d) {
    if (SecondsLeft(deadline_) <= 0) {
      answer_.timed_out = true;
      return;
    }
    auto found = Dive(model_->solver, services_, Better(), options_.milp,
                      deadline_, d == 0 ? nullptr : &rng);
    ++idle;
    if (!found) continue;
    double found_cost = Objective(*model_, *found);
    if (Adopt(std::move(*found), found_cost, "dive")) idle = 0;
    Report(fmt::format("dive {}: {:g}", d + 1, found_cost));
  }
}

// CBC's standard solver finds incumbents well; with service cuts at every
// node it proves well. Alternate the two, restarting from the best
// solution, with node budgets doubling from kFirstRunNodes until the
// solve's nodes (MilpOptions::nodes) are spent.
void MilpSearch::CbcRuns() {
  constexpr int kFirstRunNodes = 100;
  ServiceCutGenerator generator(services_, model_->solver.getNumCols(),
                                model_->solver.getNumRows());
  const int64_t nodes = options_.milp.nodes;
  int64_t budget = kFirstRunNodes;
  int64_t spent = 0;  // the budgets given, whatever each run used of it
  for (int run = 0;
       !answer_.optimal && !Close() && (nodes == 0 || spent < nodes); ++run) {
    if (SecondsLeft(deadline_) <= 0.05) {
      answer_.timed_out = true;
      return;
    }
    bool service_cuts = options_.milp.tree_cuts && run % 2 == 1;
    CbcLimits limits;
    limits.seconds = SecondsLeft(deadline_);
    limits.nodes =
        static_cast<int>(nodes == 0 ? budget : std::min(budget, nodes - spent));
    spent += limits.nodes;
    if (run % 2 == 1) budget *= 2;
    auto found = RunFromBest(limits, service_cuts ? &generator : nullptr);
    if (found) Adopt(std::move(found->first), found->second, "cbc");
    Report(fmt::format("CBC run {} ({}, {} nodes)", run + 1,
                       service_cuts ? "service cuts" : "standard",
                       limits.nodes));
  }
}

// Returns CBC's best solution and its cost, or nothing. Records whether it
// proved optimality, raises the bound and adds its nodes.
std::optional<std::pair<std::vector<double>, double>> MilpSearch::RunFromBest(
    const CbcLimits& limits, CglCutGenerator* generator) {
  CbcRunOptions run;
  run.limits = limits;
  run.cuts = generator;
  if (HaveBest()) {
    run.incumbent = best_;
    run.incumbent_cost = best_cost_;
  }
  run.priorities = priorities_;
  if (one_cost_) {
    run.arguments.insert(run.arguments.end(),
                         {"-increment", std::to_string(cost_ * 0.999999)});
  }
  if (generator != nullptr) {
    run.arguments.insert(run.arguments.end(), {"-preprocess", "off"});
  }
  if (options_.progress) {
    run.progress = [this](const std::string& line) {
      options_.progress("milp: " + line);
    };
  }
  CbcAnswer answer = RunCbc(model_->solver, run);
  answer_.optimal = answer.proven;
  answer_.timed_out |= answer.timed_out;
  answer_.bound = std::max(answer_.bound, answer.bound);
  answer_.nodes += answer.nodes;
  if (!answer.best) return std::nullopt;
  return std::pair{std::move(*answer.best), answer.objective};
}

}  // namespace migserve::optimizer::milp
