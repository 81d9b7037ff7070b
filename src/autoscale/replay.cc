#include "autoscale/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "autoscale/sizer.h"
#include "cluster/cluster_state.h"
#include "controller/planner.h"
#include "controller/transition_simulation.h"

namespace migserve::autoscale {
namespace {

constexpr double kShortTolerance = 1e-6;  // req/s

// Per service of `services`: its ready capacity in `capacity`.
std::vector<double> InOrder(const std::vector<std::string>& services,
                            const std::map<std::string, double>& capacity) {
  std::vector<double> out;
  for (const std::string& s : services) {
    auto it = capacity.find(s);
    out.push_back(it == capacity.end() ? 0 : it->second);
  }
  return out;
}

// The trace's rates as the workload orders its services.
struct Rates {
  const RateTrace& trace;
  std::vector<int> column;  // per workload service: its trace index

  double At(size_t step, size_t s) const {
    return trace.rates[step][column[s]];
  }
  // The observations of (now - window, now]: each step in force then, at
  // the later of its start and the window's start.
  std::vector<Observation> Window(double now_s, double window_s) const {
    std::vector<Observation> out;
    for (size_t k = trace.StepAt(now_s - window_s);
         k + 1 < trace.times_s.size(); ++k) {
      if (trace.times_s[k] > now_s) break;
      Observation o{std::max(trace.times_s[k], now_s - window_s), {}};
      for (size_t s = 0; s < column.size(); ++s) o.rates.push_back(At(k, s));
      out.push_back(std::move(o));
    }
    return out;
  }
  // Each service's highest rate in [from_s, to_s).
  std::vector<double> Peak(double from_s, double to_s) const {
    std::vector<double> peak(column.size(), 0);
    for (size_t k = trace.StepAt(from_s);
         k + 1 < trace.times_s.size() && trace.times_s[k] < to_s; ++k) {
      for (size_t s = 0; s < column.size(); ++s) {
        peak[s] = std::max(peak[s], At(k, s));
      }
    }
    return peak;
  }
};

// Measures `samples` (time order) against the trace.
ReplayRun Measure(const std::vector<ReplaySample>& samples, const Rates& rates,
                  const std::vector<std::string>& services) {
  ReplayRun run;
  const RateTrace& trace = rates.trace;
  for (size_t i = 0; i < samples.size(); ++i) {
    double a = std::max(samples[i].time_s, trace.start_s());
    double b = i + 1 < samples.size() ? samples[i + 1].time_s : trace.end_s();
    b = std::min(b, trace.end_s());
    if (!(b > a)) continue;
    run.gpu_hours += samples[i].gpus * (b - a) / 3600;
    run.peak_gpus = std::max(run.peak_gpus, samples[i].gpus);
    for (size_t k = trace.StepAt(a); k + 1 < trace.times_s.size(); ++k) {
      double from = std::max(a, trace.times_s[k]);
      double to = std::min(b, trace.times_s[k + 1]);
      if (from >= b) break;
      if (!(to > from)) continue;
      for (size_t s = 0; s < services.size(); ++s) {
        if (samples[i].capacity[s] < rates.At(k, s) - kShortTolerance) {
          run.short_minutes += (to - from) / 60;
          run.short_minutes_by_service[services[s]] += (to - from) / 60;
        }
      }
    }
  }
  return run;
}

// The oracle: every interval (options.oracle_interval_s, else the
// policy's) deployed for its peak rates, moving for free.
StatusOr<ReplayRun> Oracle(const Sizer& sizer, const Rates& rates,
                           const std::vector<std::string>& services,
                           const ReplayOptions& options) {
  const double interval_s = options.oracle_interval_s > 0
                                ? options.oracle_interval_s
                                : options.policy.interval_s;
  std::vector<ReplaySample> samples;
  std::map<std::vector<double>, ReplaySample> solved;
  const RateTrace& trace = rates.trace;
  for (double t = trace.start_s(); t < trace.end_s(); t += interval_s) {
    std::vector<double> peak = rates.Peak(t, t + interval_s);
    auto it = solved.find(peak);
    if (it == solved.end()) {
      MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment d,
                                sizer.Deploy(peak, nullptr));
      it = solved
               .emplace(peak, ReplaySample{0, d.UsedGpus(),
                                           d.CreditedRates(services)})
               .first;
    }
    ReplaySample sample = it->second;
    sample.time_s = t;
    samples.push_back(std::move(sample));
  }
  ReplayRun run = Measure(samples, rates, services);
  run.transitions = static_cast<int>(samples.size()) - 1;
  return run;
}

// Matches the workload's services to the trace's columns (`rates`) and
// names them, and the trace's span, in `report`; InvalidArgument if either
// has a service the other lacks.
Status MatchServices(const workload::Workload& workload, Rates* rates,
                     ReplayReport* report) {
  const RateTrace& trace = rates->trace;
  for (const workload::Service& s : workload.services) {
    int column = trace.Find(s.name);
    if (column < 0) {
      return Status::InvalidArgument(fmt::format(
          "replay: the trace has no rate for service {} of the workload",
          s.name));
    }
    rates->column.push_back(column);
    report->services.push_back(s.name);
  }
  for (size_t k = 0; k < trace.services.size(); ++k) {
    const std::string& name = trace.services[k];
    if (std::find(report->services.begin(), report->services.end(), name) ==
        report->services.end()) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: service: {} is not in the workload", trace.source,
                      trace.lines[k], name));
    }
  }
  report->start_s = trace.start_s();
  report->end_s = trace.end_s();
  return Status::Ok();
}

// A move the policy decided: when, what, its pod starts and the GPUs before.
struct MoveAt {
  double t = 0;
  const Decision& decision;  // the caller's, alive for the call
  int starts = 0;
  int gpus_before = 0;
};

// Runs the move from `cluster` to `target` on the simulated cluster and
// records its capacity over time and its event in `report`; returns the
// simulation.
StatusOr<controller::Simulation> RecordMove(
    const ReplayOptions& options, const MoveAt& move,
    const cluster::ClusterState& cluster,
    const controller::TransitionGoal& goal,
    const deployment::Deployment& target, ReplayReport* report) {
  controller::SimulationOptions sim;
  sim.durations = options.durations;
  sim.seed = options.seed + report->events.size();
  MIGSERVE_ASSIGN_OR_RETURN(
      controller::Simulation moved,
      controller::SimulateTransition(cluster, target, goal, sim));
  const cluster::TransitionReport& r = moved.report;
  double t = move.t;
  for (const cluster::CapacitySample& c : r.capacity_history) {
    report->samples.push_back(
        {t + c.time_s, r.peak_gpus, InOrder(report->services, c.capacity)});
  }
  report->samples.push_back({t + r.makespan_s, moved.end.UsedGpus(),
                             InOrder(report->services, moved.end.Capacity())});
  ReplayEvent event{t,
                    move.decision.move,
                    move.decision.reason,
                    move.gpus_before,
                    moved.end.UsedGpus(),
                    move.starts,
                    r.makespan_s,
                    "",
                    r.survive_dropped};
  if (!r.problems.empty()) event.problem = r.problems.front();
  report->events.push_back(std::move(event));
  return moved;
}

// Where the policy starts: a deployment for what the first moment wants,
// on a cluster of the budget's GPUs, else of twice the GPUs of `peak`, the
// static provisioning (the temporary replicas of a move's compaction go to
// idle GPUs too; idle ones count for nothing). A first moment whose search
// needs more than the budget while `peak` fits it starts at `peak`, which
// serves every moment of the trace: a trace whose peaks fit the budget
// never fails on its first moment. InvalidArgument if neither fits.
struct Start {
  deployment::Deployment deployed;
  cluster::ClusterState cluster;
};
StatusOr<Start> StartAt(const Sizer& sizer, const Rates& rates, int budget,
                        const deployment::Deployment& peak,
                        const ReplayOptions& options, Policy* policy) {
  const int gpus = budget > 0 ? budget : 2 * peak.UsedGpus();
  std::vector<Observation> first = rates.Window(rates.trace.start_s(), 0);
  std::vector<double> want;
  for (size_t s = 0; s < rates.column.size(); ++s) {
    want.push_back(policy->Want(s, first));
  }
  Start start;
  MIGSERVE_ASSIGN_OR_RETURN(start.deployed, sizer.Deploy(want, nullptr));
  if (budget > 0 && start.deployed.UsedGpus() > budget) {
    if (peak.UsedGpus() > budget || sizer.ceiling().empty()) {
      return Status::InvalidArgument(fmt::format(
          "replay: the trace's first moment needs {} GPUs, more than the "
          "budget of {} (--max-gpus)",
          start.deployed.UsedGpus(), budget));
    }
    start.deployed = peak;
    want = sizer.ceiling();
  }
  policy->Moved(want);
  MIGSERVE_ASSIGN_OR_RETURN(start.cluster,
                            cluster::ClusterFromDeployment(
                                start.deployed, {options.gpus_per_node, gpus}));
  return start;
}

// Static provisioning for each service's peak over the trace, measured in
// `report`.
StatusOr<deployment::Deployment> StaticPeak(const Sizer& sizer,
                                            const Rates& rates,
                                            ReplayReport* report) {
  const RateTrace& trace = rates.trace;
  MIGSERVE_ASSIGN_OR_RETURN(
      deployment::Deployment peak,
      sizer.Deploy(rates.Peak(trace.start_s(), trace.end_s()), nullptr));
  report->static_peak = Measure({{trace.start_s(), peak.UsedGpus(),
                                  peak.CreditedRates(report->services)}},
                                rates, report->services);
  return peak;
}

std::string Clock(double time_s) {
  int minutes = static_cast<int>(std::floor(time_s / 60));
  return fmt::format("{}:{:02d}", minutes / 60, minutes % 60);
}

// The progress line of a move made `since_s` into the trace.
std::string Said(const ReplayEvent& event, double since_s) {
  return fmt::format("{} {}; {} -> {} GPUs, {} pod starts, {:.0f} s{}",
                     Clock(since_s), event.reason, event.gpus_before,
                     event.gpus_after, event.pod_starts, event.makespan_s,
                     event.survive_dropped.dropped()
                         ? "; " + event.survive_dropped.Sentence()
                         : "");
}

// What a transition from `from` to `to` that stopped part-way leaves as
// the deployment to move on from: the cluster as it is, owing each service
// min(before, after), what the transition kept throughout.
deployment::Deployment Reached(const cluster::ClusterState& cluster,
                               const deployment::Deployment& from,
                               const deployment::Deployment& to) {
  std::vector<workload::Service> services = to.services;
  for (workload::Service& s : services) {
    for (const workload::Service& before : from.services) {
      if (before.name == s.name) {
        s.throughput = std::min(s.throughput, before.throughput);
      }
    }
  }
  deployment::Deployment reached = cluster::ToDeployment(cluster, services);
  reached.survive = to.survive;
  return reached;
}

// The sizer of every move. Under a budget, a move over it goes to the
// trace's peaks: what the static provisioning the budget is sized for
// serves.
StatusOr<Sizer> MakeSizer(const workload::Workload& workload,
                          const profile::ProfileTable& profiles,
                          const Rates& rates, const ReplayOptions& options) {
  SizerOptions sizing{options.solve,
                      options.move_nodes,
                      options.move_time_limit_s,
                      options.gpus_per_node,
                      {}};
  if (options.max_gpus != 0) {
    sizing.ceiling = rates.Peak(rates.trace.start_s(), rates.trace.end_s());
  }
  return Sizer::Make(workload, profiles, sizing);
}

// Work bounded by the input (issue 92: a trace spanning 1e9 s at
// --interval 1 ran on for ever): the policy's decisions and the oracle's
// steps, each at most kMaxReplaySteps.
Status CheckSteps(const RateTrace& trace, const ReplayOptions& options) {
  const double span_s = trace.end_s() - trace.start_s();
  for (auto [flag, interval_s] :
       {std::pair{"--interval", options.policy.interval_s},
        std::pair{"--oracle-interval", options.oracle_interval_s > 0
                                           ? options.oracle_interval_s
                                           : options.policy.interval_s}}) {
    if (span_s / interval_s > kMaxReplaySteps) {
      return Status::InvalidArgument(fmt::format(
          "replay: the trace spans {} s, {:.0f} steps at {} {} s: more than "
          "the {:.0f} a replay takes; give a larger {} or a shorter trace",
          span_s, span_s / interval_s, flag, interval_s, kMaxReplaySteps,
          flag));
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ReplayReport> Replay(const RateTrace& trace,
                              const workload::Workload& workload,
                              const profile::ProfileTable& profiles,
                              const ReplayOptions& options) {
  MIGSERVE_RETURN_IF_ERROR(options.policy.Validate());
  MIGSERVE_RETURN_IF_ERROR(options.durations.Validate());
  MIGSERVE_RETURN_IF_ERROR(CheckSteps(trace, options));
  ReplayReport report;
  Rates rates{trace, {}};
  MIGSERVE_RETURN_IF_ERROR(MatchServices(workload, &rates, &report));
  StatusOr<Sizer> made = MakeSizer(workload, profiles, rates, options);
  if (!made.ok()) return made.status().WithPrefix("replay");
  const Sizer& sizer = *made;
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress("replay: " + line);
  };

  say("static provisioning for the peak");
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment peak,
                            StaticPeak(sizer, rates, &report));

  Policy policy(options.policy, report.services,
                std::vector<double>(report.services.size(), 0));
  const int budget = options.max_gpus < 0 ? peak.UsedGpus() : options.max_gpus;
  report.max_gpus = budget;
  MIGSERVE_ASSIGN_OR_RETURN(
      Start start, StartAt(sizer, rates, budget, peak, options, &policy));
  deployment::Deployment deployed = std::move(start.deployed);
  cluster::ClusterState cluster = std::move(start.cluster);
  report.samples.push_back({trace.start_s(), cluster.UsedGpus(),
                            InOrder(report.services, cluster.Capacity())});
  say(fmt::format("{} starts on {} GPUs", Clock(0), cluster.UsedGpus()));

  double interval = options.policy.interval_s;
  for (double t = trace.start_s() + interval; t < trace.end_s();) {
    Decision d = policy.Decide(t, rates.Window(t, options.policy.window_s));
    if (d.move == Move::kHold) {
      t += interval;
      continue;
    }
    MIGSERVE_ASSIGN_OR_RETURN(
        Sizer::Move move,
        sizer.DeployWithin(d.required, cluster, budget,
                           policy.required() == sizer.ceiling()));
    if (!move.over.empty()) {
      // At the trace's peaks already, the cluster is held there.
      say(move.to_ceiling
              ? fmt::format("{} held at the trace's peaks: {}",
                            Clock(t - trace.start_s()), d.reason)
              : fmt::format("{} over budget: {}; {}",
                            Clock(t - trace.start_s()), d.reason, move.over));
      report.over_budget += move.to_ceiling ? 0 : 1;
      t += interval;
      continue;
    }
    if (move.to_ceiling) {
      d.reason += fmt::format(
          "; near or over the GPU budget of {}: to the trace's peaks instead",
          budget);
    }
    deployment::Deployment& target = move.target;
    int gpus_now = cluster.UsedGpus();
    int starts = target.summary && target.summary->transition
                     ? target.summary->transition->cost.pod_starts
                     : 0;
    if (d.move == Move::kDown &&
        !policy.WorthIt(gpus_now, target.UsedGpus(), starts)) {
      say(
          fmt::format("{} declined: {}; {} -> {} GPUs does not pay for {} "
                      "pod starts",
                      Clock(t - trace.start_s()), d.reason, gpus_now,
                      target.UsedGpus(), starts));
      ++report.declined;
      policy.Declined(t);
      t += interval;
      continue;
    }
    MIGSERVE_ASSIGN_OR_RETURN(
        controller::Simulation moved,
        RecordMove(options, {t, d, starts, gpus_now}, cluster,
                   controller::MakeGoal(deployed, target), target, &report));
    say(Said(report.events.back(), t - trace.start_s()));
    const cluster::TransitionReport& r = moved.report;
    cluster = std::move(moved.end);
    if (r.ok()) {
      deployed = std::move(target);
      policy.Moved(move.rates);
    } else {
      // Stopped part-way (the event says why): the next move starts from
      // the cluster as it is, owing each service what this one kept.
      deployed = Reached(cluster, deployed, target);
    }
    // The next decision once the move is done.
    t += std::max(1.0, std::ceil(r.makespan_s / interval)) * interval;
  }
  report.policy = Measure(report.samples, rates, report.services);
  report.policy.transitions = static_cast<int>(report.events.size());

  say("the oracle");
  MIGSERVE_ASSIGN_OR_RETURN(report.oracle,
                            Oracle(sizer, rates, report.services, options));
  return report;
}

}  // namespace migserve::autoscale
