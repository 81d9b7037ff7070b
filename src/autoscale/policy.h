// The autoscaling policy (docs/autoscale.md): from the request rates each
// service received lately to the rates the deployment must serve. Safe: a
// service whose wanted rate rises above what is required of it moves up at
// once. Cheap: one whose wanted rate stays well below its required rate
// (hysteresis) for a whole cool-down moves down, and only when the GPUs it
// saves outweigh the pod starts the move costs. Every decision says why.
#ifndef MIGSERVE_AUTOSCALE_POLICY_H_
#define MIGSERVE_AUTOSCALE_POLICY_H_

#include <string>
#include <vector>

#include "autoscale/policy_state.h"
#include "util/status.h"

namespace migserve::autoscale {

struct PolicyOptions {
  double interval_s = 300;  // a decision this often
  double window_s = 900;    // on the rates observed this far back
  double quantile = 0.95;   // the window's rate at this quantile ...
  double trend_s = 300;     // ... plus its upward trend this far ahead ...
  double headroom = 0.05;   // ... times 1 + headroom
  // A service that wants more than it is required moves up at once, with
  // this share more, and so does every service within this share of
  // wanting more: one move for the next steps of a rise.
  double up_step = 0.1;
  // A move changes a service's required rate by at most these shares of
  // it (as the HPA's scaling policies limit a step): up to (1 + up_limit)
  // x, down to (1 - down_limit) x; what is left waits for the next move.
  // 0: no limit, the default up, where a limit leaves a rising service
  // short for as many moves as it needs (from 1 req/s, doubling takes nine
  // moves to 512).
  double up_limit = 0;
  double down_limit = 0;
  // Wanted rates are rounded up to powers of 1 + grid (and to at least
  // min_rate), so that a service's rate takes few distinct values: fewer
  // small moves, and credits computed once per value.
  double grid = 0.05;
  double min_rate = 1;
  // A service moves down only when its wanted rate stays below
  // down_below x its required rate for cooldown_s ...
  double down_below = 0.85;
  double cooldown_s = 1800;
  // ... and the move saves more GPU-seconds over the next cool-down than
  // its pod starts cost, each start_cost_gpu_s.
  double start_cost_gpu_s = 60;
  // A service whose latest observed p99 exceeds p99_near x its SLO moves up
  // at once, by up_step above its required rate, whatever its rate says
  // (its credits are optimistic for the traffic it gets).
  double p99_near = 0.9;
  // A service whose observed p99 exceeds its SLO while it receives less
  // than its credits learns a margin: its credits hold its SLO only up to
  // the rate it received, their ratio (never below margin_floor), and every
  // later decision asks for its wanted rate over that margin. Margins only
  // fall; 1: never learn.
  double margin_floor = 0.5;

  // Returns InvalidArgument naming the first option out of its range.
  Status Validate() const;
};

// The rates (req/s) observed at one moment, one per service of the policy;
// NaN where a service's rate was not observed (a missing or stale series:
// unknown, never zero traffic). And, if known, each service's p99 latency
// (ms; NaN where not observed).
struct Observation {
  double time_s = 0;
  std::vector<double> rates;
  std::vector<double> p99_ms = {};  // empty: none observed
};

enum class Move { kHold, kUp, kDown };
const char* MoveName(Move move);  // "hold", "up", "down"

struct Decision {
  Move move = Move::kHold;
  std::vector<double> required;  // per service: what the move asks for
  std::string reason;            // one line, naming the services that move
};

class Policy {
 public:
  // `services` and the rates `required` of each now (the deployment's).
  Policy(PolicyOptions options, std::vector<std::string> services,
         std::vector<double> required);

  // The services' latency SLOs (ms), for the p99 trigger (none until set),
  // and what the deployment credits each with now (req/s; until set, its
  // required rate): a service near its SLO asks for up_step more than that,
  // since the rate it was credited with does not hold its latency.
  void SetSlos(std::vector<double> slo_ms) { slo_ms_ = std::move(slo_ms); }
  void SetCapacity(std::vector<double> capacity) {
    capacity_ = std::move(capacity);
  }

  // The rate service `s` wants given `window`, the observations of the
  // last window_s (oldest first), over its margin; NaN if none of them
  // observed it.
  double Want(size_t s, const std::vector<Observation>& window) const;
  // Decides at `now_s` from `window`. Up when any service wants more than
  // it is required (to up_step more than it wants; every service within
  // up_step of wanting more comes along, and the low ones below go down
  // with them) or its latest p99 is near its SLO; else down when some
  // service has wanted less than down_below x its required rate for
  // cooldown_s (every service wanting that little comes along); else hold.
  // A service the window never observed keeps its rate. A p99 over the SLO
  // under the credits first corrects the service's margin (the reason
  // says so).
  Decision Decide(double now_s, const std::vector<Observation>& window);
  // Told that the cluster now serves `required` (a move done): the
  // services whose rate changed start a new cool-down when next low.
  void Moved(const std::vector<double>& required);
  // Told that a down move was not worth it: those services wait another
  // cool-down from `now_s`.
  void Declined(double now_s);
  // Returns true if a down move from `gpus_now` to `gpus_after` GPUs that
  // starts `pod_starts` pods saves more than it costs.
  bool WorthIt(int gpus_now, int gpus_after, int pod_starts) const;

  // What it remembers beyond the required rates, and the same given back
  // (a restarted autoscaler): services it does not know are left out, a
  // margin never rises, and a cool-down under way goes on from its start.
  PolicyState Remembered() const;
  void Recall(const PolicyState& state);

  const std::vector<double>& required() const { return required_; }
  // Per service: the share of its credits that holds its SLO (1 until a
  // p99 over the SLO under its credits says less).
  const std::vector<double>& margins() const { return margin_; }
  const std::vector<std::string>& services() const { return services_; }

 private:
  double Round(double rate) const;
  // Sets (*required)[s] to `to`, within the step limits of service s's
  // required rate, and returns the reason's part for it: "a (x -> y req/s)",
  // with what it wants when a limit held it back.
  std::string Change(size_t s, double to, std::vector<double>* required) const;

  PolicyOptions options_;
  std::vector<std::string> services_;
  std::vector<double> required_;
  std::vector<double> slo_ms_;
  std::vector<double> capacity_;
  std::vector<double> margin_;
  // Per service: since when it has wanted less than down_below x required
  // (negative: it does not).
  std::vector<double> low_since_;
};

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_POLICY_H_
