#include "optimizer/survive.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "deployment/validator.h"
#include "optimizer/milp/milp_optimizer.h"
#include "optimizer/registry.h"
#include "optimizer/testing/shipped_workload.h"

namespace migserve::optimizer {
namespace {

class SurviveTest : public ShippedWorkloadTest {
 protected:
  // A GPU of seven 1g instances, all serving `service`.
  deployment::GpuConfig SevenOf(int service) const {
    int one = gpu_.FindProfile("1g.10gb");
    std::vector<mig::Instance> instances;
    for (int start = 0; start < 7; ++start) instances.push_back({one, start});
    return {mig::Layout(instances), std::vector<int>(7, service)};
  }

  // Expects that `deployment` with each of its failure domains removed
  // still validates against the workload with every service's required
  // rate lowered to keep x it (no headroom, no survive): an independent
  // check of what survive promises.
  void ExpectEveryLossSurvived(const deployment::Deployment& deployment) {
    workload::Workload kept = workload_;
    for (workload::Service& s : kept.services) {
      s.throughput =
          Rate::Of(s.throughput.value() * workload_.survive->keep).value();
      s.min_replicas = 1;
    }
    kept.headroom = 0;
    kept.survive.reset();
    // Each GPU's domain as validate sees it: the GPU, or its node (named,
    // else the unplaced convention).
    std::map<std::string, std::vector<int>> domains;
    for (size_t g = 0; g < deployment.gpus.size(); ++g) {
      const deployment::DeployedGpu& gpu = deployment.gpus[g];
      std::string name =
          workload_.survive->domain == workload::FailureDomain::kGpu
              ? fmt::format("gpu {}", gpu.id)
              : gpu.node.value_or(deployment::UnplacedNode(gpu.id));
      domains[name].push_back(static_cast<int>(g));
    }
    for (const auto& [name, lost] : domains) {
      deployment::Deployment left = deployment;
      left.gpus.clear();
      for (size_t g = 0; g < deployment.gpus.size(); ++g) {
        if (std::find(lost.begin(), lost.end(), g) == lost.end()) {
          left.gpus.push_back(deployment.gpus[g]);
        }
      }
      auto report = deployment::Validate(left, kept, profiles_, gpu_);
      ASSERT_TRUE(report.ok()) << report.status().ToString();
      EXPECT_TRUE(report->ok()) << name << ": " << report->problems[0];
    }
  }

  // Runs milp on workload_ without and then with `survive`, expects the
  // surviving deployment to validate, to survive every loss, to cost more
  // than the plain one, and the plain one to fail validate's survive
  // check; returns the two GPU counts.
  std::pair<int, int> PlainAndSurviving(workload::Survive survive,
                                        const SolveOptions& options = {}) {
    Rebuild();
    RunResult plain = RunOptimizer(milp_, *problem_, SolveOptions{});
    EXPECT_EQ(plain.outcome, Outcome::kOptimal);
    workload_.survive = survive;
    Rebuild();
    RunResult run = RunOptimizer(milp_, *problem_, options);
    last_ = run.deployment;
    EXPECT_NE(run.outcome, Outcome::kInfeasible) << run.reason;
    const deployment::Summary& s = *run.deployment.summary;
    EXPECT_LE(*s.lower_bound, s.gpus);
    EXPECT_GE(*s.lower_bound, plain.deployment.summary->gpus);
    auto report =
        deployment::Validate(run.deployment, workload_, profiles_, gpu_);
    EXPECT_TRUE(report.ok() && report->ok())
        << (report.ok() ? report->problems[0] : report.status().ToString());
    ExpectEveryLossSurvived(run.deployment);
    auto fragile =
        deployment::Validate(plain.deployment, workload_, profiles_, gpu_);
    EXPECT_TRUE(fragile.ok() && !fragile->ok());
    if (fragile.ok() && !fragile->ok()) {
      EXPECT_NE(fragile->problems[0].find(": losing "), std::string::npos)
          << fragile->problems[0];
    }
    return {plain.deployment.summary->gpus, s.gpus};
  }

  milp::MilpOptimizer milp_;
  deployment::Deployment last_;  // PlainAndSurviving's surviving deployment
};

// Two GPUs, each all one service's: spread, each GPU carries four 1g of
// one service and three of the other, so losing either costs a service at
// most four instances; capacities are unchanged.
TEST_F(SurviveTest, SpreadHalvesWhatOneGpuCarries) {
  Load("night");
  int one = gpu_.FindProfile("1g.10gb");
  std::vector<deployment::GpuConfig> configs = {SevenOf(0), SevenOf(1)};
  std::vector<int> domains =
      FailureDomainsOf(2, workload::FailureDomain::kGpu, {})->of;
  ASSERT_EQ(domains, (std::vector<int>{0, 1}));
  deployment::CompletionRates before = deployment::Completion(configs, *caps_);
  std::vector<WorstLoss> lost = WorstLosses(configs, domains, *caps_);
  EXPECT_DOUBLE_EQ(lost[0].credit, 7 * caps_->throughput(0, one));
  SpreadServices(domains, *caps_, &configs);
  EXPECT_EQ(deployment::Completion(configs, *caps_), before);
  lost = WorstLosses(configs, domains, *caps_);
  EXPECT_DOUBLE_EQ(lost[0].credit, 4 * caps_->throughput(0, one));
  EXPECT_DOUBLE_EQ(lost[1].credit, 4 * caps_->throughput(1, one));
  EXPECT_EQ(lost[2].domain, -1);
  for (const deployment::GpuConfig& c : configs) {
    EXPECT_EQ(std::count(c.services.begin(), c.services.end(), 0) +
                  std::count(c.services.begin(), c.services.end(), 1),
              7);
    EXPECT_GE(std::count(c.services.begin(), c.services.end(), 0), 3);
  }
}

// Unplaced, nodes of eight GPUs in order; on a fleet's nodes, each config
// to the node holding the fewest so far, while it has GPUs.
TEST(FailureDomainsTest, NodesOfEightOrSpreadOverTheFleet) {
  auto unplaced = FailureDomainsOf(17, workload::FailureDomain::kNode, {});
  ASSERT_TRUE(unplaced.ok());
  EXPECT_EQ(unplaced->of[7], 0);
  EXPECT_EQ(unplaced->of[8], 1);
  EXPECT_EQ(unplaced->of[16], 2);
  EXPECT_EQ(unplaced->Name(2), "node node-2");
  EXPECT_TRUE(unplaced->index.empty());
  std::vector<FleetNode> fleet = {{"a", 2}, {"b", 8}, {"c", 1}};
  auto spread = FailureDomainsOf(6, workload::FailureDomain::kNode, fleet);
  ASSERT_TRUE(spread.ok());
  EXPECT_EQ(spread->of, (std::vector<int>{0, 1, 2, 0, 1, 1}));
  EXPECT_EQ(spread->index, (std::vector<int>{0, 0, 0, 1, 1, 2}));
  EXPECT_EQ(spread->Name(2), "node c");
  auto gpus = FailureDomainsOf(3, workload::FailureDomain::kGpu, fleet);
  EXPECT_TRUE(gpus->index.empty());
  EXPECT_EQ(gpus->Name(1), "gpu 1");
  auto full = FailureDomainsOf(12, workload::FailureDomain::kNode, fleet);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().message(),
            "the deployment needs 12 GPUs but the fleet's 3 node(s) have 11");
  // Spare nodes (a cluster's new ones) hold only what the others cannot,
  // as few as do, spread over those.
  std::vector<FleetNode> grown = {
      {"a", 4, false}, {"s1", 8, true}, {"s2", 8, true}, {"s3", 8, true}};
  auto kept = FailureDomainsOf(3, workload::FailureDomain::kNode, grown);
  EXPECT_EQ(kept->of, (std::vector<int>{0, 0, 0}));
  auto one = FailureDomainsOf(10, workload::FailureDomain::kNode, grown);
  EXPECT_EQ(std::count(one->of.begin(), one->of.end(), 0), 4);
  EXPECT_EQ(std::count(one->of.begin(), one->of.end(), 1), 6);
  auto two = FailureDomainsOf(14, workload::FailureDomain::kNode, grown);
  EXPECT_EQ(std::count(two->of.begin(), two->of.end(), 0), 4);
  EXPECT_EQ(std::count(two->of.begin(), two->of.end(), 1), 5);
  EXPECT_EQ(std::count(two->of.begin(), two->of.end(), 2), 5);
  EXPECT_EQ(std::count(two->of.begin(), two->of.end(), 3), 0);
}

// survive {gpu, keep 1} on night and day (the test): removing any
// one GPU of milp's deployment leaves every service at its required rate.
TEST_F(SurviveTest, LosingAnyGpuOfNightOrDayKeepsEveryRate) {
  Load("night", 0, queueing::CapacityModel::kP99);
  auto [night_plain, night] =
      PlainAndSurviving({workload::FailureDomain::kGpu, 1});
  EXPECT_GT(night, night_plain);
  EXPECT_EQ(night, 8);
  Load("day", 0, queueing::CapacityModel::kP99);
  auto [day_plain, day] = PlainAndSurviving({workload::FailureDomain::kGpu, 1});
  EXPECT_GT(day, day_plain);
  // The spare priced in the model: day's bound is met, so it is proven.
  EXPECT_EQ(day, 20);
  EXPECT_EQ(*last_.summary->lower_bound, 20);
  EXPECT_EQ(last_.summary->status, Outcome::kOptimal);
}

// Without the spare in the model (--milp-no-spare) only rounds of raised
// rates price it: day's bound is the weaker first round's and the answer
// costs more.
TEST_F(SurviveTest, TheSpareInTheModelBeatsRoundsAlone) {
  Load("day", 0, queueing::CapacityModel::kP99);
  SolveOptions rounds;
  rounds.milp.spare = false;
  auto [plain, day] =
      PlainAndSurviving({workload::FailureDomain::kGpu, 1}, rounds);
  EXPECT_EQ(day, 21);
  EXPECT_EQ(*last_.summary->lower_bound, 19);
  EXPECT_EQ(last_.summary->status, Outcome::kFeasible);
}

// Stands in for a spare model too slow for its time (at a thousand GPUs
// its first round took all of a 60-s limit and ended one GPU from its
// bound, with nothing that survives): it says what time it was given and
// finds nothing; without the spare it is milp.
class SlowSpare : public Optimizer {
 public:
  const char* name() const override { return "slow-spare"; }
  Solution Solve(const Problem& problem,
                 const deployment::CompletionRates& initial,
                 const SolveOptions& options) override {
    if (!options.milp.spare) return milp_.Solve(problem, initial, options);
    spare_time_s = options.time_limit_s;
    return Infeasible("milp: the time limit ended the search");
  }
  bool PricesSpare(const SolveOptions& options) const override {
    return options.milp.spare;
  }

  double spare_time_s = -1;

 private:
  milp::MilpOptimizer milp_;
};

// The spare model's rounds get half the time, and when they end with
// nothing the rounds alone answer: day survives on 21 GPUs
// (TheSpareInTheModelBeatsRoundsAlone), not "no deployment".
TEST_F(SurviveTest, RoundsAloneAnswerWhereTheSpareModelRunsOutOfTime) {
  Load("day", 0, queueing::CapacityModel::kP99);
  workload_.survive = workload::Survive{workload::FailureDomain::kGpu, 1};
  Rebuild();
  SlowSpare slow;
  SolveOptions options;
  options.time_limit_s = 20;
  SurvivingSolution out = SolveToSurvive(slow, *problem_, options);
  EXPECT_GT(slow.spare_time_s, 0);
  EXPECT_LE(slow.spare_time_s, 10);
  ASSERT_NE(out.solution.outcome, Outcome::kInfeasible) << out.solution.reason;
  EXPECT_EQ(out.solution.configs.size(), 21u);
}

// survive {node, keep 0.5}: losing any node of eight GPUs leaves every day
// service at half its rate.
// Without an inventory, the nodes of eight it assumes are said.
TEST_F(SurviveTest, LosingAnyNodeOfDayKeepsHalf) {
  Load("day", 0, queueing::CapacityModel::kP99);
  std::vector<std::string> said;
  SolveOptions options;
  options.progress = [&](const std::string& line) { said.push_back(line); };
  auto [plain, surviving] =
      PlainAndSurviving({workload::FailureDomain::kNode, 0.5}, options);
  EXPECT_GE(surviving, plain);
  ASSERT_FALSE(said.empty());
  EXPECT_EQ(said.front(),
            "survive: domain node without an inventory: assuming nodes of 8 "
            "GPUs, filled in deployment order (give --inventory for your "
            "nodes)");
}

// survive {node, keep 0.5} on a fleet of three 8-GPU nodes: the GPUs are
// spread over the fleet's nodes and named there, and losing any one leaves
// every night service half its rate, on fewer GPUs than nodes of eight
// filled in order (where the first node holds most of the deployment).
TEST_F(SurviveTest, NightOnAFleetsNodesSpreadsOverThem) {
  Load("night", 0, queueing::CapacityModel::kP99);
  auto [plain, unplaced] =
      PlainAndSurviving({workload::FailureDomain::kNode, 0.5});
  SolveOptions fleet;
  fleet.nodes = {{"gpu-a", 8}, {"gpu-b", 8}, {"gpu-c", 8}};
  workload_.survive.reset();
  auto [again, placed] =
      PlainAndSurviving({workload::FailureDomain::kNode, 0.5}, fleet);
  EXPECT_LT(placed, unplaced);
  std::map<std::string, std::set<int>> indexes;
  for (const deployment::DeployedGpu& g : last_.gpus) {
    ASSERT_TRUE(g.node && g.index);
    EXPECT_TRUE(indexes[*g.node].insert(*g.index).second) << *g.node;
  }
  ASSERT_EQ(indexes.size(), 3u);
  for (const auto& [node, used] : indexes) {
    EXPECT_LE(used.size(), (last_.gpus.size() + 2) / 3) << node;
  }
}

// A heuristic's deployment is made to survive the same way.
TEST_F(SurviveTest, GreedySurvivesToo) {
  Load("night", 0, queueing::CapacityModel::kP99);
  workload_.survive = workload::Survive{workload::FailureDomain::kGpu, 1};
  Rebuild();
  auto greedy = MakeOptimizer("greedy").value();
  RunResult run = RunOptimizer(*greedy, *problem_, SolveOptions{});
  ASSERT_NE(run.outcome, Outcome::kInfeasible) << run.reason;
  ExpectEveryLossSurvived(run.deployment);
  EXPECT_GE(run.deployment.summary->extra["survive_rounds"].get<int>(), 1);
}

}  // namespace
}  // namespace migserve::optimizer
