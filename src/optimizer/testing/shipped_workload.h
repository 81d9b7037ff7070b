// A test fixture: one shipped workload (data/workloads/), or a generated
// one, on the A100-80GB with the shipped profiles, as a Problem.
#ifndef MIGSERVE_OPTIMIZER_TESTING_SHIPPED_WORKLOAD_H_
#define MIGSERVE_OPTIMIZER_TESTING_SHIPPED_WORKLOAD_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "mig/gpu_catalog.h"
#include "optimizer/problem.h"
#include "profile/profile_csv.h"
#include "util/test_util.h"
#include "workload/generator.h"
#include "workload/workload_yaml.h"

namespace migserve::optimizer {

class ShippedWorkloadTest : public ::testing::Test {
 protected:
  // Loads data/workloads/<name>.yaml, with `max_procs` MPS processes if
  // given, under the paper's capacity model unless told otherwise: the
  // optimizers' tests check the counts the paper's figures were made with.
  void Load(const std::string& name, int max_procs = 0,
            queueing::CapacityModel model = queueing::CapacityModel::kPaper) {
    workload_ = workload::LoadWorkload(
                    testing::SourcePath("data/workloads/" + name + ".yaml"))
                    .value();
    if (max_procs > 0) workload_.max_procs = max_procs;
    workload_.capacity_model = model;
    Rebuild();
  }

  // Builds the capacities and the problem of workload_ (again, after a
  // test changed it).
  void Rebuild() {
    caps_.emplace(
        workload::CapacityMatrix::Build(workload_, profiles_, gpu_).value());
    problem_.emplace(workload_, gpu_, *caps_);
  }

  // Generates a workload (workload/generator.h) in place of a shipped one.
  void Generate(const workload::GenerateOptions& options) {
    workload_ = workload::GenerateWorkload(profiles_, options).value();
    Rebuild();
  }

  // Generates `services` services for a relaxed bound of `gpus` GPUs, at
  // SLOs of 50 and 100 ms, under the paper's capacity model: services of
  // one model and SLO share a class (the p99 credits would also split them
  // by rate).
  void GenerateInClasses(int services, int gpus, uint64_t seed) {
    workload::GenerateOptions o;
    o.capacity_model = queueing::CapacityModel::kPaper;
    o.services = services;
    o.latencies_ms = {50, 100};
    o.target_gpus = gpus;
    o.seed = seed;
    Generate(o);
  }

  const mig::GpuModel& gpu_ =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  profile::ProfileTable profiles_ =
      profile::LoadProfileCsv(
          testing::SourcePath("data/profiles/a100-80gb.csv"))
          .value();
  workload::Workload workload_;
  std::optional<workload::CapacityMatrix> caps_;
  std::optional<Problem> problem_;
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_TESTING_SHIPPED_WORKLOAD_H_
