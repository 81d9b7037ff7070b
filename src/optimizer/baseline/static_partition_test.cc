#include "optimizer/baseline/static_partition.h"

#include <gtest/gtest.h>

#include "deployment/validator.h"
#include "mig/gpu_catalog.h"
#include "optimizer/registry.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace migserve::optimizer {
namespace {

// Service a: 1g 100/s, 2g 250/s, 4g 450/s, 7g 800/s.
// Service b: 2g and up only (too slow on 1g): 2g 100/s, 4g 200/s, 7g 300/s.
constexpr const char* kProfileCsv =
    "model,gpu,profile,batch,throughput,latency_ms\n"
    "a,A100-SXM4-80GB,1g.10gb,8,100,10\n"
    "a,A100-SXM4-80GB,2g.20gb,8,250,10\n"
    "a,A100-SXM4-80GB,4g.40gb,8,450,10\n"
    "a,A100-SXM4-80GB,7g.80gb,8,800,10\n"
    "b,A100-SXM4-80GB,1g.10gb,8,60,90\n"
    "b,A100-SXM4-80GB,2g.20gb,8,100,10\n"
    "b,A100-SXM4-80GB,4g.40gb,8,200,10\n"
    "b,A100-SXM4-80GB,7g.80gb,8,300,10\n";

class StaticPartitionTest : public ::testing::Test {
 protected:
  RunResult Solve(const char* algo, const std::string& services) {
    workload_ = workload::ParseWorkload(
                    "gpu: A100-SXM4-80GB\ncapacity_model: paper\nservices:\n" +
                        services,
                    "w.yaml")
                    .value();
    auto caps = workload::CapacityMatrix::Build(workload_, profiles_, gpu_);
    EXPECT_TRUE(caps.ok()) << caps.status().ToString();
    caps_.emplace(std::move(caps).value());
    Problem problem(workload_, gpu_, *caps_);
    auto optimizer = MakeOptimizer(algo);
    EXPECT_TRUE(optimizer.ok());
    RunResult run = RunOptimizer(**optimizer, problem, SolveOptions{});
    if (run.outcome != Outcome::kInfeasible) {
      auto report =
          deployment::Validate(run.deployment, workload_, profiles_, gpu_);
      EXPECT_TRUE(report.ok() && report->ok()) << algo;
    }
    return run;
  }

  const mig::GpuModel& gpu_ =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  profile::ProfileTable profiles_ =
      profile::ParseProfileCsv(kProfileCsv, "p.csv").value();
  workload::Workload workload_;
  std::optional<workload::CapacityMatrix> caps_;
};

constexpr const char* kTwo =
    "  - {name: a, model: a, throughput: 2000, latency_ms: 50}\n"
    "  - {name: b, model: b, throughput: 650, latency_ms: 50}\n";

TEST_F(StaticPartitionTest, WholeUsesCeilPerService) {
  RunResult run = Solve("whole", kTwo);
  ASSERT_EQ(run.outcome, Outcome::kFeasible);
  // a: ceil(2000/800) = 3, b: ceil(650/300) = 3.
  EXPECT_EQ(run.deployment.summary->gpus, 6);
  EXPECT_EQ(run.deployment.summary->algorithm, "whole");
  // Relaxed bound: a at 125/slice (2g), b at 50/slice (2g, 4g):
  // (16 + 13) slices / 7 = 4.14 -> 5.
  EXPECT_EQ(run.deployment.summary->lower_bound, 5);
}

TEST_F(StaticPartitionTest, AllOneSlicePacksInstancesAcrossServices) {
  RunResult run =
      Solve("all-1g",
            "  - {name: a, model: a, throughput: 1000, latency_ms: 50}\n"
            "  - {name: c, model: a, throughput: 450, latency_ms: 50}\n");
  ASSERT_EQ(run.outcome, Outcome::kFeasible);
  // 10 + 5 one-slice instances, 7 per GPU -> 3 GPUs, the last one 1 busy.
  EXPECT_EQ(run.deployment.summary->gpus, 3);
  EXPECT_EQ(run.deployment.gpus[1].instances[2].service, "a");
  EXPECT_EQ(run.deployment.gpus[1].instances[3].service, "c");
  EXPECT_FALSE(run.deployment.gpus[2].instances[1].service.has_value());
}

TEST_F(StaticPartitionTest, AllOneSliceAnswersNoWhenServiceDoesNotFit) {
  RunResult run = Solve("all-1g", kTwo);
  EXPECT_EQ(run.outcome, Outcome::kInfeasible);
  EXPECT_EQ(run.reason,
            "service 'b' cannot run on 1g.10gb: no measured point of 'b' "
            "there meets its SLO (latency limit 50 ms, at most 1 process(es)) "
            "or fits its memory");
}

TEST_F(StaticPartitionTest, WholeSaysWhenTheModelWasNotMeasuredOnTheGpu) {
  profiles_ = profile::ParseProfileCsv(
                  "model,gpu,profile,batch,throughput,latency_ms\n"
                  "a,A100-SXM4-80GB,1g.10gb,8,100,10\n",
                  "p.csv")
                  .value();
  RunResult run = Solve(
      "whole", "  - {name: x, model: a, throughput: 50, latency_ms: 50}\n");
  EXPECT_EQ(run.outcome, Outcome::kInfeasible);
  EXPECT_EQ(run.reason,
            "service 'x' cannot run on 7g.80gb: model 'a' was not measured "
            "there");
}

TEST_F(StaticPartitionTest, MixServesOneServicePerGpu) {
  RunResult run = Solve("mix", kTwo);
  ASSERT_EQ(run.outcome, Outcome::kFeasible);
  // a: 800/GPU -> 3 GPUs (the last needs only 400: 4g alone);
  // b: 300/GPU (no 1g) -> 3 GPUs.
  EXPECT_EQ(run.deployment.summary->gpus, 6);
  const auto& last_a = run.deployment.gpus[2].instances;
  EXPECT_EQ(last_a[0].profile, "4g.40gb");
  EXPECT_EQ(last_a[0].service, "a");
  EXPECT_FALSE(last_a[1].service.has_value());
  for (const auto& i : run.deployment.gpus[3].instances) {
    EXPECT_NE(i.service, "a");
  }
}

}  // namespace
}  // namespace migserve::optimizer
