// Test instances: small random workloads on A100-80GB whose optimum the
// brute-force oracle (brute_force.h) can find.
#ifndef MIGSERVE_OPTIMIZER_TESTING_RANDOM_INSTANCE_H_
#define MIGSERVE_OPTIMIZER_TESTING_RANDOM_INSTANCE_H_

#include <cstdint>
#include <string>

#include "profile/profile_table.h"
#include "workload/workload.h"

namespace migserve::optimizer {

inline constexpr const char* kGpu = "A100-SXM4-80GB";
inline constexpr const char* kProfiles[] = {"1g.10gb", "2g.20gb", "3g.40gb",
                                            "4g.40gb", "7g.80gb"};
inline constexpr int kSlices[] = {1, 2, 3, 4, 7};

// A measured point of `model` on `profile` at batch 8, 10 ms.
profile::ProfileRow Point(const std::string& model, const char* profile,
                          double throughput);

// A random small instance under the paper's capacity model: 2 to 4 models
// with sub-, super- or linear scaling and one service each, whose demands
// need a handful of GPUs.
struct Instance {
  profile::ProfileTable profiles;
  workload::Workload workload;
};
Instance MakeInstance(uint64_t seed);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_TESTING_RANDOM_INSTANCE_H_
