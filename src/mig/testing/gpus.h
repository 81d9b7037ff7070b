// The GPU models the tests name most, from the embedded catalog.
#ifndef MIGSERVE_MIG_TESTING_GPUS_H_
#define MIGSERVE_MIG_TESTING_GPUS_H_

#include <string_view>

#include "mig/gpu_catalog.h"
#include "mig/layout.h"

namespace migserve::testing {

// The embedded table named `name` (or with it as an alias); aborts the test
// binary if there is none.
inline const mig::GpuModel& Gpu(std::string_view name) {
  return *mig::GpuCatalog::Default().Find(name).value();
}

inline const mig::GpuModel& A100() { return Gpu("A100-SXM4-80GB"); }
inline const mig::GpuModel& H100() { return Gpu("H100-SXM5-80GB"); }

// An instance of A100's `profile` at memory slice `start`.
inline mig::Instance A100Instance(const char* profile, int start) {
  return {A100().FindProfile(profile), start};
}

}  // namespace migserve::testing

#endif  // MIGSERVE_MIG_TESTING_GPUS_H_
