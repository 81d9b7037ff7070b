// What one replica is credited with serving for a service (docs/capacity.md):
// under `p99` (the default) the highest arrival rate at which its p99
// latency stays within the service's SLO, with the arrivals the service's
// traffic gives it behind its router (QuantileCapacity, traffic.h); under
// `paper` the measured throughput of its row (paper 7), which ignores
// queueing. Every optimizer, the validator and routing use these credits.
#ifndef MIGSERVE_QUEUEING_CAPACITY_MODEL_H_
#define MIGSERVE_QUEUEING_CAPACITY_MODEL_H_

#include <optional>
#include <string>
#include <string_view>

#include "mig/gpu_model.h"
#include "profile/capacity.h"
#include "profile/profile_table.h"
#include "queueing/traffic.h"

namespace migserve::queueing {

enum class CapacityModel { kP99, kPaper };

// "p99" or "paper".
std::string_view CapacityModelName(CapacityModel model);
std::optional<CapacityModel> ParseCapacityModel(std::string_view name);

// The SLO a replica serves under, and how it is judged.
struct ServiceTerms {
  profile::CapacityLimits limits;  // which rows may serve
  double slo_ms = 0;               // the p99 latency to keep
  Traffic traffic;                 // its stream and router
  CapacityModel model = CapacityModel::kP99;
};

// The requests per second one replica of `row` is credited with.
double RowCapacity(const profile::ProfileTable& table,
                   const profile::ProfileRow& row, const ServiceTerms& terms);

struct Credit {
  const profile::ProfileRow* row = nullptr;  // null: cannot serve
  double capacity = 0;
};

// Returns the row of `model` on `gpu`'s profile `profile_index` that fits
// the limits with the highest capacity (ties: lower latency, then smaller
// batch, then fewer processes), or a null row if none fits or none has
// capacity.
Credit BestCredit(const profile::ProfileTable& table, const mig::GpuModel& gpu,
                  int profile_index, const std::string& model,
                  const ServiceTerms& terms);

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_CAPACITY_MODEL_H_
