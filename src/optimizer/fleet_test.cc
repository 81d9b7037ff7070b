#include "optimizer/fleet.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "deployment/validator.h"
#include "mig/gpu_catalog.h"
#include "mig/layout_enumerator.h"
#include "mig/testing/gpus.h"
#include "profile/profile_csv.h"
#include "workload/capacity_matrix.h"

namespace migserve::optimizer {
namespace {

constexpr char kA100[] = "A100-SXM4-80GB";
constexpr char kL4[] = "L4-24GB";
const char* kA100Profiles[] = {"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb",
                               "7g.80gb"};

using testing::Gpu;

// Two services on an A100 (MIG) and an L4 (whole GPU only), with
// throughputs drawn from `rng`.
struct Case {
  workload::Workload workload;
  profile::ProfileTable profiles;
};

Case MakeCase(std::mt19937* rng, double l4_cost) {
  std::uniform_real_distribution<double> per_slice(50, 150), l4(100, 800),
      need(200, 1600);
  std::string csv = "model,gpu,profile,batch,procs,throughput,latency_ms\n";
  const int slices[] = {1, 2, 3, 4, 7};
  for (const char* model : {"ma", "mb"}) {
    double base = per_slice(*rng);
    for (int k = 0; k < 5; ++k) {
      csv += fmt::format("{},{},{},8,1,{:.3f},10\n", model, kA100,
                         kA100Profiles[k], base * slices[k] * (1 + 0.05 * k));
    }
    csv += fmt::format("{},{},whole,8,1,{:.3f},10\n", model, kL4, l4(*rng));
  }
  Case c{workload::Workload(), profile::ParseProfileCsv(csv, "t.csv").value()};
  c.workload.source = "t.yaml";
  c.workload.gpu = kA100;
  c.workload.offers = {{kA100, 1.0}, {kL4, l4_cost}};
  c.workload.services = {{"a", "ma", Rate::Of(need(*rng)).value(), 100, 1},
                         {"b", "mb", Rate::Of(need(*rng)).value(), 100, 2}};
  return c;
}

// True if the instances (per profile of each type) can be split between
// the two services so that each gets its throughput.
bool CanSplit(const std::vector<std::pair<double, double>>& per_instance,
              const std::vector<int>& counts, size_t k, double a, double b,
              double need_a, double need_b) {
  if (k == counts.size()) return a >= need_a - 1e-9 && b >= need_b - 1e-9;
  for (int to_a = 0; to_a <= counts[k]; ++to_a) {
    if (CanSplit(per_instance, counts, k + 1, a + to_a * per_instance[k].first,
                 b + (counts[k] - to_a) * per_instance[k].second, need_a,
                 need_b)) {
      return true;
    }
  }
  return false;
}

// The least cost by exhaustive search: up to 3 A100s (any multisets of
// maximal layouts) and 8 L4s.
double OracleCost(const Case& c) {
  const mig::GpuModel& a100 = Gpu(kA100);
  workload::Workload on_a100 = c.workload, on_l4 = c.workload;
  on_l4.gpu = kL4;
  auto caps_a =
      workload::CapacityMatrix::Build(on_a100, c.profiles, a100, false).value();
  auto caps_l =
      workload::CapacityMatrix::Build(on_l4, c.profiles, Gpu(kL4), false)
          .value();
  Problem problem(on_a100, a100, caps_a);
  std::vector<mig::Multiset> multisets =
      mig::DistinctMultisets(a100, problem.maximal_layouts, nullptr);
  std::vector<std::pair<double, double>> per_instance;
  for (size_t p = 0; p < a100.profiles.size(); ++p) {
    per_instance.emplace_back(caps_a.throughput(0, p), caps_a.throughput(1, p));
  }
  per_instance.emplace_back(caps_l.throughput(0, 0), caps_l.throughput(1, 0));
  double need_a = c.workload.services[0].throughput.value();
  double need_b = c.workload.services[1].throughput.value();
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> chosen;
  std::function<void(size_t)> walk = [&](size_t from) {
    std::vector<int> counts(a100.profiles.size() + 1, 0);
    for (int m : chosen) {
      for (size_t p = 0; p < a100.profiles.size(); ++p) {
        counts[p] += multisets[m][p];
      }
    }
    for (int l4 = 0; l4 <= 8; ++l4) {
      double cost =
          static_cast<double>(chosen.size()) + l4 * c.workload.offers[1].cost;
      if (cost >= best - 1e-9) break;
      counts.back() = l4;
      if (CanSplit(per_instance, counts, 0, 0, 0, need_a, need_b)) {
        best = cost;
        break;
      }
    }
    if (chosen.size() == 3) return;
    for (size_t m = from; m < multisets.size(); ++m) {
      chosen.push_back(static_cast<int>(m));
      walk(m);
      chosen.pop_back();
    }
  };
  walk(0);
  return best;
}

TEST(FleetTest, MilpMatchesTheExhaustiveOptimumOnSmallFleets) {
  std::mt19937 rng(5);
  int mixed = 0;
  for (int round = 0; round < 10; ++round) {
    double l4_cost = std::vector<double>{0.3, 0.5, 0.8, 1.0}[round % 4];
    Case c = MakeCase(&rng, l4_cost);
    double oracle = OracleCost(c);
    ASSERT_TRUE(std::isfinite(oracle)) << round;
    auto run = RunFleet(c.workload, c.profiles, SolveOptions{});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_EQ(run->outcome, Outcome::kOptimal) << round;
    const MilpInfo& info = *run->info.milp;
    EXPECT_NEAR(*info.cost, oracle, 1e-6) << round;
    auto report = deployment::Validate(run->deployment, c.workload, c.profiles,
                                       Gpu(kA100));
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->ok()) << round << ": " << report->problems.front();
    mixed += info.gpus_by_type.at(kA100) > 0 && info.gpus_by_type.at(kL4) > 0;
  }
  EXPECT_GT(mixed, 0);  // some optima use both types
}

TEST(FleetTest, EqualCostsMinimizeTheGpuCount) {
  std::mt19937 rng(9);
  Case c = MakeCase(&rng, 1.0);
  auto run = RunFleet(c.workload, c.profiles, SolveOptions{});
  ASSERT_TRUE(run.ok());
  EXPECT_DOUBLE_EQ(*run->info.milp->cost,
                   static_cast<double>(run->deployment.gpus.size()));
  // What the summary writes is the same cost.
  EXPECT_DOUBLE_EQ(run->deployment.summary->extra["cost"].get<double>(),
                   *run->info.milp->cost);
  for (const deployment::DeployedGpu& g : run->deployment.gpus) {
    ASSERT_TRUE(g.gpu.has_value());
  }
}

TEST(FleetTest, AServiceNoOfferedGpuRunsIsAnInputError) {
  std::mt19937 rng(3);
  Case c = MakeCase(&rng, 0.5);
  c.workload.services[1].model = "unknown";
  auto run = RunFleet(c.workload, c.profiles, SolveOptions{});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("service 'b'"), std::string::npos)
      << run.status().message();
}

}  // namespace
}  // namespace migserve::optimizer
