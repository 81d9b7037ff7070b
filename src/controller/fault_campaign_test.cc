// A seeded campaign of faults during transitions (issue 72): a node lost, a
// replica evicted by someone else, an action that fails, a route write
// that fails (issue 91: the route is left as it was), a GPU someone else's
// claim holds a device of (issue 91: its repartitions fail, and the
// controller must plan around it), each at a chosen
// moment, on the simulated cluster whose migrations keep their source
// until the destination is ready (as on Kubernetes) or not. Each service's
// capacity is checked at every change; a drop below its floor is charged
// to the controller only where one of its own calls made it, not where the
// harness did. Every route the controller writes is checked against the
// cluster at that moment: a weighted group's member that no longer serves
// (evicted, on a lost node) is charged too (issue 91: routed capacity);
// and so is every call of the controller that takes away a replica the
// live routes (those whose writes succeeded) still send requests to.
// 0 charged in every run, and every run ends at its target (or at what is
// left of it after a loss) or returns an error saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "cluster/backend_wrapper.h"
#include "cluster/router.h"
#include "cluster/simulated_cluster.h"
#include "controller/degraded_target.h"
#include "controller/reconciler.h"
#include "deployment/testing/shipped.h"

namespace migserve::controller {
namespace {

using cluster::Action;
using cluster::ActionResult;
using cluster::ClusterState;
using cluster::SimulatedCluster;

enum class FaultKind {
  kLoseNode,
  kEvictReplica,
  kFailAction,
  kFailRouteWrite,
  kHoldGpu  // not drawn with the others: every third run, its own draws
};
constexpr int kDrawnKinds = 4;

struct Fault {
  FaultKind kind = FaultKind::kLoseNode;
  int at_call = 0;           // before the controller's call with this number
  bool before_start = true;  // the call is a Start (else a WaitAny)
  uint64_t pick = 0;         // which node or replica
};

// Records the routes the controller writes, charging each weighted group
// member that is not serving on the simulated cluster when it is written,
// and keeps the live routes: a write set to fail (FailNextWrite) is
// refused and leaves its route as it was.
class CheckingRouter : public cluster::Router {
 public:
  explicit CheckingRouter(const SimulatedCluster* sim) : sim_(sim) {}

  StatusOr<bool> SetRoute(const cluster::ServiceRoute& route) override {
    if (fail_next_) {
      fail_next_ = false;
      ++refused_;
      return Status::Unavailable("injected: the route write failed");
    }
    for (const cluster::RouteGroup& g : route.groups) {
      if (g.weight <= 0) continue;
      for (const cluster::ReplicaSite& m : g.members) {
        if (!Serves(route.service, m)) {
          charged_.push_back(fmt::format(
              "{}: a route written weighs {}@{}, which serves nothing",
              route.service, m.gpu.ToString(), m.start));
        }
      }
    }
    live_[route.service] = route;
    ++writes_;
    return true;
  }

  void FailNextWrite() { fail_next_ = true; }

  // The live routes' weighted members that serve now, as "service
  // gpu@start".
  std::set<std::string> RoutedServing() const {
    std::set<std::string> serving;
    for (const auto& [service, route] : live_) {
      for (const cluster::RouteGroup& g : route.groups) {
        if (g.weight <= 0) continue;
        for (const cluster::ReplicaSite& m : g.members) {
          if (Serves(service, m)) {
            serving.insert(
                fmt::format("{} {}@{}", service, m.gpu.ToString(), m.start));
          }
        }
      }
    }
    return serving;
  }

  const std::vector<std::string>& charged() const { return charged_; }
  int writes() const { return writes_; }
  int refused() const { return refused_; }

 private:
  bool Serves(const std::string& service, const cluster::ReplicaSite& m) const {
    const cluster::GpuState* gpu = sim_->state().FindGpu(m.gpu);
    return gpu != nullptr && std::any_of(gpu->slots.begin(), gpu->slots.end(),
                                         [&](const cluster::Slot& s) {
                                           return s.instance.start == m.start &&
                                                  s.replica &&
                                                  s.replica->service == service;
                                         });
  }

  const SimulatedCluster* sim_;
  std::map<std::string, cluster::ServiceRoute> live_;
  bool fail_next_ = false;
  std::vector<std::string> charged_;
  int writes_ = 0;
  int refused_ = 0;
};

// The controller's calls pass through to the simulated cluster; the faults
// are injected just before the calls they are set for (before a Start: the
// moment between the controller's look and its write). Every drop of a
// service's capacity below its floor is recorded with who made it.
class FaultHarness : public cluster::BackendWrapper {
 public:
  FaultHarness(SimulatedCluster* sim, CheckingRouter* router,
               std::vector<Fault> faults, const TransitionGoal* goal,
               bool guarded)
      : BackendWrapper(sim),
        sim_(sim),
        router_(router),
        faults_(std::move(faults)),
        goal_(goal),
        guarded_(guarded) {}

  Status Start(const Action& a) override {
    Inject(true);
    // Someone else's claim lands on the GPU a repartition is about to
    // give instances to.
    if (hold_next_ && a.kind == cluster::ActionKind::kRepartition &&
        !a.add.empty()) {
      hold_next_ = false;
      ++injected_;
      sim_->HoldGpu(a.at.gpu, "team-a/theirs");
    }
    std::map<std::string, double> before = sim_->state().Capacity();
    std::set<std::string> routed = router_->RoutedServing();
    Status s = BackendWrapper::Start(a);
    Charge(before, routed, fmt::format("start of action {}", a.id));
    return s;
  }

  StatusOr<ActionResult> WaitAny() override {
    Inject(false);
    std::map<std::string, double> before = sim_->state().Capacity();
    std::set<std::string> routed = router_->RoutedServing();
    StatusOr<ActionResult> r = BackendWrapper::WaitAny();
    if (r.ok() && r->id == fail_id_) {
      r->status = Status::Unavailable("injected: the action failed");
      fail_id_ = -1;
    }
    if (r.ok() &&
        r->status.message().find("is held by claim") != std::string::npos) {
      ++held_failures_;
    }
    Charge(before, routed, "end of an action");
    return r;
  }

  // Without the guard the controller's writes are unchecked (the
  // campaign's own check: it must then find violations).
  void SetRemovalGuard(cluster::RemovalGuard guard) override {
    if (guarded_) BackendWrapper::SetRemovalGuard(std::move(guard));
  }

  const std::vector<std::string>& charged() const { return charged_; }
  int injected() const { return injected_; }
  // Repartitions that failed on a GPU someone else holds.
  int held_failures() const { return held_failures_; }

 private:
  void Inject(bool start) {
    ++calls_;
    for (const Fault& f : faults_) {
      if (f.at_call != calls_ || f.before_start != start) continue;
      if (f.kind == FaultKind::kHoldGpu) {
        hold_next_ = true;  // injected at the next repartition's start
        continue;
      }
      const ClusterState& state = sim_->state();
      if (state.gpus.empty()) continue;
      ++injected_;
      switch (f.kind) {
        case FaultKind::kLoseNode:
          sim_->LoseNode(state.gpus[f.pick % state.gpus.size()].id.node);
          break;
        case FaultKind::kEvictReplica: {
          std::vector<std::pair<cluster::GpuId, mig::Instance>> serving;
          for (const cluster::GpuState& g : state.gpus) {
            for (const cluster::Slot& s : g.slots) {
              if (s.replica) serving.emplace_back(g.id, s.instance);
            }
          }
          if (serving.empty()) break;
          const auto& [gpu, instance] = serving[f.pick % serving.size()];
          ASSERT_TRUE(sim_->EvictReplica(gpu, instance).ok());
          break;
        }
        case FaultKind::kFailAction: {
          std::vector<int> running = sim_->Running();
          if (!running.empty()) fail_id_ = running[f.pick % running.size()];
          break;
        }
        case FaultKind::kFailRouteWrite:
          router_->FailNextWrite();
          break;
        case FaultKind::kHoldGpu:
          break;  // above
      }
    }
  }

  // A service the call took lower than it was and below its floor, and a
  // replica the call took away while the live routes (`routed` before it)
  // still sent it requests.
  void Charge(const std::map<std::string, double>& before,
              const std::set<std::string>& routed, const std::string& what) {
    const std::set<std::string> still = router_->RoutedServing();
    for (const std::string& site : routed) {
      if (!still.count(site)) {
        charged_.push_back(fmt::format(
            "{}: {} took it away while its live route still weighs it", site,
            what));
      }
    }
    std::map<std::string, double> after = sim_->state().Capacity();
    for (const auto& [service, had] : before) {
      double now = after.count(service) ? after.at(service) : 0;
      double floor = goal_->Floor(service);
      if (now < had - 1e-6 && now < floor - 1e-6) {
        charged_.push_back(
            fmt::format("{}: {} took {} from {:.6g} to {:.6g} "
                        "req/s, below its floor {:.6g}",
                        service, what, service, had, now, floor));
      }
    }
  }

  SimulatedCluster* sim_;
  CheckingRouter* router_;
  std::vector<Fault> faults_;
  const TransitionGoal* goal_;
  bool guarded_;
  int calls_ = 0;
  int injected_ = 0;
  int fail_id_ = -1;
  int held_failures_ = 0;
  bool hold_next_ = false;
  std::vector<std::string> charged_;
};

struct RunResult {
  Status status;
  std::vector<std::string> charged;
  std::vector<std::string> end_problems;
  int injected = 0;
  int route_writes = 0;
  int route_writes_refused = 0;
  int held_failures = 0;
};

// Run `seed` of the campaign: a transition, a migration model and one to
// three faults drawn from the seed.
RunResult RunCampaign(uint64_t seed, bool guarded) {
  std::mt19937_64 rng(seed);
  static const std::pair<const char*, const char*> kMoves[] = {
      {"day", "night"},
      {"night", "day"},
      {"day-survive", "night-survive"},
      {"night-survive", "day-survive"}};
  auto [from_name, to_name] = kMoves[rng() % 4];
  deployment::Deployment from = testing::ShippedDeployment(from_name);
  deployment::Deployment to = testing::ShippedDeployment(to_name);
  ClusterState current = cluster::ClusterFromDeployment(from, {8, 24}).value();
  TransitionGoal goal = MakeGoal(from, to);
  std::vector<Fault> faults(1 + rng() % 3);
  for (Fault& f : faults) {
    f.kind = static_cast<FaultKind>(rng() % kDrawnKinds);
    f.at_call = 1 + static_cast<int>(rng() % 80);
    f.before_start = rng() % 2 == 0;
    f.pick = rng();
  }
  // Someone else's claim on a GPU, in every third run, from draws of its
  // own: the other faults keep the moments the seed gave them before.
  if (seed % 3 == 0) {
    std::mt19937_64 held(seed * 7919);
    Fault f;
    f.kind = FaultKind::kHoldGpu;
    f.at_call = 1 + static_cast<int>(held() % 80);
    f.before_start = held() % 2 == 0;
    f.pick = held();
    faults.push_back(f);
  }
  SimulatedCluster sim(current, {}, seed);
  sim.set_migrate_source(rng() % 4 == 0
                             ? cluster::MigrateSource::kGoneAtStart
                             : cluster::MigrateSource::kGoneWhenReady);
  CheckingRouter router(&sim);
  FaultHarness harness(&sim, &router, faults, &goal, guarded);
  auto journal = Journal::Open(":memory:").value();
  // As the controller command runs it: at `from` first, then moved to `to`;
  // where a loss leaves too little room, to the part of `to` that fits.
  ControllerOptions options;
  options.router = &router;
  Reconciler reconciler(&harness, journal.get(), options);
  EXPECT_TRUE(reconciler.Reconcile(from).ok());
  RunResult result;
  result.status = reconciler.Reconcile(to);
  if (result.status.ok()) {
    // At the target, or at the part of it that fits what a loss left: a
    // second pass holds it (after a loss it may move to a better fit of
    // the cluster as it is now, its floors checked as well).
    Status again = reconciler.Reconcile(to);
    if (!again.ok()) result.end_problems.push_back(again.message());
    ClusterState end = sim.state();
    if (!FitTarget(end, to)) {
      result.end_problems = EndStateProblems(end, MakeGoal(to, to));
    }
  }
  result.charged = harness.charged();
  result.charged.insert(result.charged.end(), router.charged().begin(),
                        router.charged().end());
  result.injected = harness.injected();
  result.route_writes = router.writes();
  result.route_writes_refused = router.refused();
  result.held_failures = harness.held_failures();
  return result;
}

constexpr int kRuns = 60;

TEST(FaultCampaignTest, NoFloorIsBrokenByTheControllerInSixtySeededRuns) {
  int injected = 0, degraded = 0, route_writes = 0, refused = 0, held = 0;
  for (uint64_t seed = 1; seed <= kRuns; ++seed) {
    RunResult r = RunCampaign(seed, true);
    injected += r.injected;
    route_writes += r.route_writes;
    refused += r.route_writes_refused;
    held += r.held_failures;
    // A GPU held by someone else is planned around: the move goes on, or
    // says that too few GPUs are left that nobody else holds.
    if (r.held_failures > 0 && !r.status.ok()) {
      EXPECT_NE(r.status.message().find("claims not migserve's hold"),
                std::string::npos)
          << "seed " << seed << ": " << r.status.ToString();
    }
    EXPECT_EQ(r.charged, std::vector<std::string>{}) << "seed " << seed;
    if (r.status.ok()) {
      EXPECT_EQ(r.end_problems, std::vector<std::string>{}) << "seed " << seed;
    } else {
      ++degraded;
      EXPECT_FALSE(r.status.message().empty()) << "seed " << seed;
    }
  }
  // The campaign injected faults in most runs, and not every run ended in
  // an error.
  EXPECT_GE(injected, kRuns * 3 / 4);
  EXPECT_LT(degraded, kRuns / 2);
  EXPECT_GT(route_writes, kRuns * 50);  // the routes were checked
  EXPECT_GE(refused, kRuns / 10) << "route writes failed";
  EXPECT_GE(held, 3) << "repartitions failed on a held GPU, planned around";
  std::cerr << fmt::format(
      "{} faults injected, {} route writes ({} failed), {} repartitions "
      "failed on a held GPU, {} runs ended in an error\n",
      injected, route_writes, refused, held, degraded);
}

// The campaign can fail: with the controller's writes unchecked (the
// removal guard never asked, as on main before issue 72) it charges the
// controller with drops below floors.
TEST(FaultCampaignTest, WithoutTheWriteGuardTheCampaignFindsViolations) {
  int runs_charged = 0;
  for (uint64_t seed = 1; seed <= kRuns; ++seed) {
    if (!RunCampaign(seed, false).charged.empty()) ++runs_charged;
  }
  EXPECT_GT(runs_charged, 0);
}

}  // namespace
}  // namespace migserve::controller
