#include "autoscale/autoscaler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "boundary/input_file.h"
#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "deployment/validator.h"
#include "util/enum_names.h"
#include "util/file.h"
#include "util/prometheus_text.h"

namespace migserve::autoscale {
namespace {

constexpr EnumName<Round> kRoundNames[] = {{Round::kHold, "hold"},
                                           {Round::kUp, "up"},
                                           {Round::kDown, "down"},
                                           {Round::kDeclined, "declined"},
                                           {Round::kOverBudget, "over_budget"},
                                           {Round::kUnlisted, "unlisted"},
                                           {Round::kPaused, "paused"},
                                           {Round::kError, "error"}};

// The target deployment as `store` holds it now, each replica's declared
// credit checked against `profiles` and, for a language model, its slice's
// peaks: the policy counts the target's credits as capacity, and a target
// that overstates one (written by hand, or by anyone who may patch it)
// would keep the autoscaler from moving up.
StatusOr<deployment::Deployment> ReadTarget(
    const TargetStore& store, const profile::ProfileTable& profiles) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, store.read());
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment target,
                            deployment::ParseDeployment(text, store.name));
  MIGSERVE_RETURN_IF_ERROR(deployment::CheckDeclaredCredits(target, &profiles));
  return target;
}

}  // namespace

TargetStore FileTarget(const std::string& path) {
  return {
      path, [path] { return ReadFile(path); },
      [path](const std::string& text) { return WriteFileAtomic(path, text); }};
}

StatusOr<std::unique_ptr<Autoscaler>> Autoscaler::Make(
    const workload::Workload& workload, const profile::ProfileTable& profiles,
    AutoscaleOptions options) {
  MIGSERVE_RETURN_IF_ERROR(options.policy.Validate());
  if (!(options.observe.step_s > 0) ||
      options.observe.step_s > options.policy.window_s) {
    return Status::InvalidArgument(
        "--step must be > 0 seconds and at most --window");
  }
  if (!options.target.read || !options.target.write) {
    return Status::InvalidArgument(
        "--target, --target-resource or --target-configmap: the target "
        "deployment is required");
  }
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment target,
                            ReadTarget(options.target, profiles));
  MIGSERVE_ASSIGN_OR_RETURN(PrometheusClient prometheus,
                            PrometheusClient::Make(options.prometheus));
  StatusOr<Sizer> sizer = Sizer::Make(workload, profiles, options.sizer);
  if (!sizer.ok()) return sizer.status().WithPrefix("autoscale");
  if (options.max_gpus < 0) {
    return Status::InvalidArgument("--max-gpus must be >= 0");
  }
  std::unique_ptr<Autoscaler> autoscaler(
      new Autoscaler(workload, profiles, target, *std::move(sizer),
                     std::move(prometheus), std::move(options)));
  autoscaler->Recall();
  return autoscaler;
}

void Autoscaler::Recall() {
  if (!options_.state.read) return;
  StatusOr<std::string> text = options_.state.read();
  StatusOr<PolicyState> state =
      text.ok() ? ParsePolicyState(*text, options_.state.name)
                : StatusOr<PolicyState>(text.status());
  if (!state.ok()) {
    options_.log(fmt::format(
        "autoscale: no policy state ({}): cool-downs start now, margins at 1",
        state.status().message()));
    return;
  }
  policy_.Recall(*state);
  remembered_ = policy_.Remembered();
  MutexLock lock(&mu_);
  margins_shown_ = policy_.margins();
}

void Autoscaler::Remember() {
  if (!options_.state.write || options_.dry_run) return;
  PolicyState state = policy_.Remembered();
  if (state == remembered_) return;
  Status written = options_.state.write(FormatPolicyState(state));
  if (!written.ok()) {
    options_.log(
        fmt::format("autoscale: policy state not kept: {}", written.message()));
    return;
  }
  remembered_ = std::move(state);
}

Autoscaler::Autoscaler(const workload::Workload& workload,
                       const profile::ProfileTable& profiles,
                       const deployment::Deployment& target, Sizer sizer,
                       PrometheusClient prometheus, AutoscaleOptions options)
    : workload_(workload),
      profiles_(profiles),
      sizer_(std::move(sizer)),
      prometheus_(std::move(prometheus)),
      options_(std::move(options)),
      policy_(options_.policy, {}, {}) {
  std::vector<double> required, slos;
  for (const workload::Service& s : workload.services) {
    names_.push_back(s.name);
    auto made_for = std::find_if(
        target.services.begin(), target.services.end(),
        [&](const workload::Service& t) { return t.name == s.name; });
    required.push_back((made_for != target.services.end() ? made_for->throughput
                                                          : s.throughput)
                           .value());
    slos.push_back(s.latency_ms);
  }
  policy_ = Policy(options_.policy, names_, required);
  policy_.SetSlos(slos);
  MutexLock lock(&mu_);
  observed_.assign(names_.size(), std::nan(""));
  p99_ms_.assign(names_.size(), std::nan(""));
  required_shown_ = required;
  margins_shown_ = policy_.margins();
}

StatusOr<Round> Autoscaler::Step(double now_s) {
  auto fail = [&](const Status& status) {
    MutexLock lock(&mu_);
    ++rounds_[Round::kError];
    last_error_ = status.message();
    Say(EventType::kWarning, "RoundFailed", status.message());
    return status;
  };
  StatusOr<Observed> observed =
      Observe(prometheus_, workload_.services, options_.observe, now_s,
              options_.policy.window_s);
  if (!observed.ok()) return fail(observed.status());
  for (const std::string& problem : observed->problems) {
    options_.log("autoscale: not observed: " + problem);
  }
  const Observation& last = observed->window.back();
  std::vector<std::string> unobserved;  // a problem, not a change
  for (size_t s = 0; s < names_.size(); ++s) {
    if (std::isnan(last.rates[s]) && !observed->changing[s]) {
      unobserved.push_back(names_[s]);
    }
  }
  if (unobserved != unobserved_said_ && !unobserved.empty()) {
    options_.event(EventType::kWarning, "NotObserved",
                   fmt::format("not observed, each kept at its rate: {}",
                               fmt::join(observed->problems, "; ")));
  }
  unobserved_said_ = std::move(unobserved);
  bool paused = !options_.pause_file.empty() &&
                std::filesystem::exists(options_.pause_file);
  bool was_paused;
  {
    MutexLock lock(&mu_);
    was_paused = paused_;
  }
  if (paused != was_paused) {
    options_.event(
        EventType::kNormal, paused ? "Paused" : "Resumed",
        fmt::format(
            "{} {}: {}", options_.pause_file, paused ? "exists" : "is gone",
            paused ? "no decision until it is removed" : "deciding again"));
  }
  {
    MutexLock lock(&mu_);
    observed_ = last.rates;
    p99_ms_ = last.p99_ms;
    paused_ = paused;
    last_error_.clear();
  }
  if (paused) {
    options_.log(fmt::format("autoscale: paused ({} exists): no decision",
                             options_.pause_file));
    MutexLock lock(&mu_);
    ++rounds_[Round::kPaused];
    return Round::kPaused;
  }
  StatusOr<deployment::Deployment> current =
      ReadTarget(options_.target, profiles_);
  if (!current.ok()) return fail(current.status());
  policy_.SetCapacity(current->CreditedRates(names_));
  Decision decision = policy_.Decide(now_s, observed->window);
  {
    MutexLock lock(&mu_);
    margins_shown_ = policy_.margins();
  }
  if (decision.move == Move::kHold) {
    Remember();
    MutexLock lock(&mu_);
    ++rounds_[Round::kHold];
    return Round::kHold;
  }
  // After the target's write: the state may share its ConfigMap, and a
  // write of it in between would make the target's refused as a
  // concurrent edit.
  StatusOr<Round> moved = Move(now_s, decision, *current);
  Remember();
  if (!moved.ok()) return fail(moved.status());
  MutexLock lock(&mu_);
  ++rounds_[*moved];
  required_shown_ = policy_.required();
  return moved;
}

StatusOr<Round> Autoscaler::Move(double now_s, const Decision& decision,
                                 const deployment::Deployment& current) {
  // The sizer moves the workload's services: one the target serves that
  // the workload lacks would lose its replicas (issue 90: a workload
  // ConfigMap not edited with the target deleted a production service,
  // the log saying only "up: ..."). Such a service leaves the target only
  // by an explicit change; until then no move is written.
  std::vector<std::string> unlisted;
  for (const std::string& service : current.ServedServices()) {
    if (std::find(names_.begin(), names_.end(), service) == names_.end()) {
      unlisted.push_back(service);
    }
  }
  if (!unlisted.empty()) {
    Say(EventType::kWarning, "NotInWorkload",
        fmt::format("held: {}; {} serves {}, which the workload lacks: a "
                    "move would delete {} replicas; add {} to the workload, "
                    "or take {} out of the target yourself",
                    decision.reason, options_.target.name,
                    fmt::join(unlisted, ", "),
                    unlisted.size() == 1 ? "its" : "their",
                    unlisted.size() == 1 ? "it" : "them",
                    unlisted.size() == 1 ? "it" : "them"));
    return Round::kUnlisted;
  }
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState cluster,
                            cluster::ClusterFromDeployment(
                                current, {options_.sizer.gpus_per_node, 0}));
  StatusOr<Sizer::Move> move =
      sizer_.DeployWithin(decision.required, cluster, options_.max_gpus, false);
  if (!move.ok())
    return move.status().WithPrefix("autoscale: " + decision.reason);
  if (!move->over.empty()) return OverBudget(decision, move->over);
  if (options_.origin) {
    if (!move->target.summary) move->target.summary.emplace();
    move->target.summary->workload = options_.origin;
  }
  const deployment::Deployment* target = &move->target;
  int gpus_now = cluster.UsedGpus();
  int starts = target->summary && target->summary->transition
                   ? target->summary->transition->cost.pod_starts
                   : 0;
  std::string what =
      fmt::format("{}; {} -> {} GPUs, {} pod starts", decision.reason, gpus_now,
                  target->UsedGpus(), starts);
  if (decision.move == Move::kDown &&
      !policy_.WorthIt(gpus_now, target->UsedGpus(), starts)) {
    Say(EventType::kNormal, "DownDeclined",
        "declined: " + what + ": the GPUs saved do not pay for the starts");
    policy_.Declined(now_s);
    return Round::kDeclined;
  }
  if (options_.dry_run) {
    Say(EventType::kNormal, "WouldMove", "dry run, would move: " + what);
  } else {
    MIGSERVE_RETURN_IF_ERROR(
        options_.target.write(deployment::FormatDeployment(*target)));
    policy_.Moved(move->rates);
    Say(EventType::kNormal,
        decision.move == Move::kUp ? "ScaledUp" : "ScaledDown",
        fmt::format("{} written: {}", options_.target.name, what));
  }
  return decision.move == Move::kUp ? Round::kUp : Round::kDown;
}

Round Autoscaler::OverBudget(const Decision& decision,
                             const std::string& what) {
  Say(EventType::kWarning, "OverBudget",
      options_.max_gpus > 0
          ? fmt::format("held: {}; {}, over the GPU budget of {} (--max-gpus)",
                        decision.reason, what, options_.max_gpus)
          : fmt::format("held: {}; {}, over the limit of {} GPUs (no "
                        "--max-gpus: a mistyped or absurd rate)",
                        decision.reason, what, options_.sizer.solve.max_gpus));
  return Round::kOverBudget;
}

void Autoscaler::Say(EventType type, const char* reason,
                     const std::string& message) {
  options_.log("autoscale: " + message);
  options_.event(type, reason, message);
}

std::string Autoscaler::Metrics() const {
  MutexLock lock(&mu_);
  PrometheusText out;
  out.Family("migserve_autoscale_rounds_total", "counter",
             "Autoscaler rounds by result (hold, up, down, declined: a down "
             "move that did not pay for its starts, over_budget: a move "
             "over the GPU budget, paused, error).");
  for (const auto& [r, name] : kRoundNames) {
    auto it = rounds_.find(r);
    out.Sample("migserve_autoscale_rounds_total",
               it == rounds_.end() ? 0 : it->second, {{"result", name}});
  }
  const auto& services = workload_.services;
  auto per_service = [&](const char* name, const char* help,
                         const std::vector<double>& values) {
    out.Family(name, "gauge", help);
    for (size_t s = 0; s < services.size(); ++s) {
      if (std::isnan(values[s])) continue;
      out.Sample(name, values[s], {{"service", services[s].name}});
    }
  };
  per_service("migserve_autoscale_observed_rate",
              "The latest observed request rate (req/s); absent when not "
              "observed.",
              observed_);
  per_service("migserve_autoscale_observed_p99_ms",
              "The latest observed p99 latency (ms); absent when not observed.",
              p99_ms_);
  per_service("migserve_autoscale_required_rate",
              "The rate the target is made for (req/s).", required_shown_);
  std::vector<double> slo_ms;
  for (const workload::Service& s : services) slo_ms.push_back(s.latency_ms);
  per_service("migserve_autoscale_slo_ms",
              "The service's p99 latency SLO (ms; a language model's, the "
              "request's, from its TTFT and TPOT).",
              slo_ms);
  per_service("migserve_autoscale_credit_margin",
              "The share of its credits that holds the service's SLO (1 "
              "until an observed p99 over the SLO under its credits says "
              "less).",
              margins_shown_);
  out.Family("migserve_autoscale_unobserved", "gauge",
             "1 for a service whose rate was not observed in the last round.");
  for (size_t s = 0; s < services.size(); ++s) {
    out.Sample("migserve_autoscale_unobserved",
               std::isnan(observed_[s]) ? 1 : 0,
               {{"service", services[s].name}});
  }
  out.Family("migserve_autoscale_max_gpus", "gauge",
             "The GPU budget no move exceeds, its transition included.");
  out.Sample("migserve_autoscale_max_gpus", options_.max_gpus);
  out.Family("migserve_autoscale_paused", "gauge",
             "1 while the pause file exists.");
  out.Sample("migserve_autoscale_paused", paused_ ? 1 : 0);
  return out.text();
}

Status Autoscaler::Health() const {
  MutexLock lock(&mu_);
  if (!last_error_.empty()) {
    return Status::Unavailable("the last round failed: " + last_error_);
  }
  return Status::Ok();
}

}  // namespace migserve::autoscale
