// Which measured points an instance may serve a model with: those that meet
// a latency limit, an MPS process limit and the instance's memory (DESIGN 3,
// paper 7). What a point is credited with is queueing/capacity_model.h's.
#ifndef MIGSERVE_PROFILE_CAPACITY_H_
#define MIGSERVE_PROFILE_CAPACITY_H_

#include <optional>
#include <string>

#include "mig/gpu_model.h"
#include "profile/profile_table.h"

namespace migserve::profile {

struct CapacityLimits {
  double latency_limit_ms = 0;  // latency_budget * SLO latency
  int max_procs = 1;
};

// Returns true if `row` may serve under `limits` on `profile`: positive
// throughput, latency within the limit, procs within the limit, and memory
// (if measured) within the profile's.
bool RowFits(const ProfileRow& row, const mig::Profile& profile,
             const CapacityLimits& limits);

// Returns the row measuring exactly (model, gpu, profile, batch, procs), or
// nullptr.
const ProfileRow* FindRow(const ProfileTable& table, const std::string& model,
                          const std::string& gpu, const std::string& profile,
                          int batch, int procs);

// Returns the lowest latency of `model` over the enabled profiles of `gpu`
// among rows that fit everything but the latency limit, or nullopt if there
// are none. Used to say how close an unservable service came.
std::optional<double> BestLatency(const ProfileTable& table,
                                  const mig::GpuModel& gpu,
                                  const mig::MigOptions& options,
                                  const std::string& model, int max_procs);

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_CAPACITY_H_
