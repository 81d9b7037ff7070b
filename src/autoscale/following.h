// The loop of `migserve autoscale` (docs/autoscale.md): rounds of the
// autoscaler every policy interval, on the workload it follows
// (autoscale/workload_source.h): a file's, or a resource's whose every new
// generation that parses makes the autoscaler anew on it.
#ifndef MIGSERVE_AUTOSCALE_FOLLOWING_H_
#define MIGSERVE_AUTOSCALE_FOLLOWING_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "autoscale/autoscaler.h"
#include "autoscale/workload_source.h"
#include "profile/profile_table.h"
#include "util/mutex.h"
#include "util/status_or.h"

namespace migserve::autoscale {

// The autoscaler of the workload followed, made anew at each of its
// generations. One thread steps it and remakes it; others may read its
// metrics and health meanwhile, from the autoscaler current when they
// ask, which lives (with the workload it reads) as long as they do.
class Following {
 public:
  // `profiles` outlives this.
  Following(const profile::ProfileTable& profiles, AutoscaleOptions options);

  // Goes on with an autoscaler on `next` (its targets saying next.origin);
  // InvalidArgument, keeping the one before, if it cannot start.
  Status Follow(FollowedWorkload next);

  // Reads `source` and follows a new generation of it, saying so
  // (WorkloadChanged); one that does not parse or start is said
  // (WorkloadInvalid, once for the same reason) and the last one kept.
  void Reread(const WorkloadSource& source);

  // The current autoscaler's round. REQUIRES: a Follow succeeded.
  StatusOr<Round> Step(double now_s);
  // The generations read and followed, and what the last round did.
  WorkloadReport Report() const;
  std::string Metrics() const;
  Status Health() const;
  // The generation followed: 0 for a workload file.
  long long generation() const;

 private:
  struct Current {
    FollowedWorkload workload;
    std::unique_ptr<Autoscaler> autoscaler;  // reads workload: after it
  };

  // What a round said last: its Event's reason and message.
  struct Heard {
    std::string reason;
    std::string message;
  };

  std::shared_ptr<Current> Now() const;
  void Say(EventType type, const char* reason, const std::string& message);
  WorkloadReport::RoundSaid RoundReport(const StatusOr<Round>& round) const;

  const profile::ProfileTable& profiles_;
  const AutoscaleOptions options_;
  mutable Mutex mu_;
  std::shared_ptr<Current> current_ GUARDED_BY(mu_);
  // The loop's thread alone reads and writes these.
  std::string refused_;     // the last refusal said; "" once one is followed
  long long observed_ = 0;  // the generation last read
  Heard heard_;             // in the round under way
  std::optional<WorkloadReport::RoundSaid> round_;  // the last round's
};

// Runs rounds every policy interval until `stop` turns true (the first at
// once), serving /metrics and /healthz when metrics_port >= 0. With
// `once`, one round: its error, if any. Returns InvalidArgument or
// Unavailable when the autoscaler cannot start. With `follow` (a
// resource: `first` its read at the start), reads it before every round,
// reports (follow->report) after every round and, at a new generation that
// parses and starts, goes on with it (its
// policy state recalled from options.state), saying so (WorkloadChanged);
// one that does not is named (WorkloadInvalid, once a generation) and the
// last good one kept.
Status RunAutoscaler(FollowedWorkload first,
                     const std::optional<WorkloadSource>& follow,
                     const profile::ProfileTable& profiles,
                     AutoscaleOptions options, bool once,
                     const std::atomic<bool>& stop);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_FOLLOWING_H_
