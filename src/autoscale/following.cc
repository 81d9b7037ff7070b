#include "autoscale/following.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>
#include <utility>

#include "util/status_server.h"
#include "util/unix_time.h"

namespace migserve::autoscale {
Following::Following(const profile::ProfileTable& profiles,
                     AutoscaleOptions options)
    : profiles_(profiles), options_(std::move(options)) {}

Status Following::Follow(FollowedWorkload next) {
  AutoscaleOptions options = options_;
  options.origin = next.origin;
  // What the round says, heard for its report.
  options.event = [this, said = options_.event](EventType type,
                                                const std::string& reason,
                                                const std::string& message) {
    heard_ = {reason, message};
    said(type, reason, message);
  };
  const long long generation = next.origin ? next.origin->generation : 0;
  auto made = std::make_shared<Current>();
  made->workload = std::move(next);
  MIGSERVE_ASSIGN_OR_RETURN(
      made->autoscaler, Autoscaler::Make(*made->workload.workload, profiles_,
                                         std::move(options)));
  observed_ = generation;
  MutexLock lock(&mu_);
  current_ = std::move(made);
  return Status::Ok();
}

void Following::Reread(const WorkloadSource& source) {
  const long long was = generation();
  StatusOr<WorkloadText> text = source.read();
  if (text.ok()) observed_ = text->generation;
  // The generation followed: nothing to parse again.
  if (text.ok() && text->generation == was) {
    refused_.clear();
    return;
  }
  StatusOr<FollowedWorkload> next =
      text.ok() ? ParseWorkloadText(source, *text)
                : StatusOr<FollowedWorkload>(text.status());
  Status followed = next.ok() ? Follow(*next) : next.status();
  if (!followed.ok()) {
    if (followed.message() == refused_) return;
    refused_ = followed.message();
    Say(EventType::kWarning, "WorkloadInvalid",
        fmt::format("{}; going on with generation {}", followed.message(),
                    was));
    return;
  }
  refused_.clear();
  Say(EventType::kNormal, "WorkloadChanged",
      fmt::format("following {} generation {} ({} services), was {}",
                  source.describe, next->origin->generation,
                  next->workload->services.size(), was));
}

StatusOr<Round> Following::Step(double now_s) {
  heard_ = {};
  StatusOr<Round> round = Now()->autoscaler->Step(now_s);
  round_ = RoundReport(round);
  return round;
}

WorkloadReport::RoundSaid Following::RoundReport(
    const StatusOr<Round>& round) const {
  if (!round.ok()) return {false, "RoundFailed", round.status().message()};
  switch (*round) {
    case Round::kHold:
      return {true, "Steady", "no move this round"};
    case Round::kPaused:
      return {false, "Paused",
              fmt::format("{} exists: no decision until it is removed",
                          options_.pause_file)};
    case Round::kOverBudget:
    case Round::kUnlisted:
    case Round::kError:
      return {false, heard_.reason, heard_.message};
    case Round::kUp:
    case Round::kDown:
    case Round::kDeclined:
      break;
  }
  return {true, heard_.reason, heard_.message};
}

WorkloadReport Following::Report() const {
  WorkloadReport report;
  report.observed = observed_;
  report.followed = generation();
  const std::shared_ptr<Current> now = Now();
  report.services =
      now ? static_cast<int>(now->workload.workload->services.size()) : 0;
  report.refused = refused_;
  report.round = round_;
  return report;
}

std::string Following::Metrics() const { return Now()->autoscaler->Metrics(); }

Status Following::Health() const { return Now()->autoscaler->Health(); }

long long Following::generation() const {
  const std::shared_ptr<Current> now = Now();
  return now && now->workload.origin ? now->workload.origin->generation : 0;
}

std::shared_ptr<Following::Current> Following::Now() const {
  MutexLock lock(&mu_);
  return current_;
}

void Following::Say(EventType type, const char* reason,
                    const std::string& message) {
  options_.log("autoscale: " + message);
  options_.event(type, reason, message);
}

Status RunAutoscaler(FollowedWorkload first,
                     const std::optional<WorkloadSource>& follow,
                     const profile::ProfileTable& profiles,
                     AutoscaleOptions options, bool once,
                     const std::atomic<bool>& stop) {
  const std::string address = options.metrics_address;
  const int port = options.metrics_port;
  const double interval = options.policy.interval_s;
  Following following(profiles, std::move(options));
  MIGSERVE_RETURN_IF_ERROR(following.Follow(std::move(first)));
  StatusServer server;
  if (port >= 0) {
    server.Page("/metrics", "text/plain; version=0.0.4",
                [&] { return following.Metrics(); });
    server.Health([&] { return following.Health(); });
    MIGSERVE_RETURN_IF_ERROR(
        server.Start(address, port).WithPrefix("--metrics-port"));
  }
  Status result = Status::Ok();
  bool first_round = true;
  while (!stop) {
    if (follow && !first_round) following.Reread(*follow);
    first_round = false;
    StatusOr<Round> round = following.Step(UnixNow());
    if (follow && follow->report) follow->report(following.Report());
    if (once) {
      result = round.status();
      break;
    }
    auto until = std::chrono::steady_clock::now() +
                 std::chrono::duration<double>(interval);
    while (!stop && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return result;
}

}  // namespace migserve::autoscale
