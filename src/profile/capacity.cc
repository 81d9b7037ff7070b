#include "profile/capacity.h"

#include <limits>

namespace migserve::profile {

bool RowFits(const ProfileRow& row, const mig::Profile& profile,
             const CapacityLimits& limits) {
  return row.throughput > 0 && row.latency_ms <= limits.latency_limit_ms &&
         row.procs <= limits.max_procs &&
         (!row.memory_gb || *row.memory_gb <= profile.memory_gb);
}

const ProfileRow* FindRow(const ProfileTable& table, const std::string& model,
                          const std::string& gpu, const std::string& profile,
                          int batch, int procs) {
  for (const ProfileRow& row : table.rows) {
    if (row.model == model && row.gpu == gpu && row.profile == profile &&
        row.batch == batch && row.procs == procs) {
      return &row;
    }
  }
  return nullptr;
}

std::optional<double> BestLatency(const ProfileTable& table,
                                  const mig::GpuModel& gpu,
                                  const mig::MigOptions& options,
                                  const std::string& model, int max_procs) {
  CapacityLimits limits{std::numeric_limits<double>::infinity(), max_procs};
  std::optional<double> best;
  for (const ProfileRow& row : table.rows) {
    if (row.model != model || row.gpu != gpu.name) continue;
    int p = gpu.FindProfile(row.profile);
    if (p < 0 || !options.Enabled(gpu.profiles[p]) ||
        !RowFits(row, gpu.profiles[p], limits)) {
      continue;
    }
    if (!best || row.latency_ms < *best) best = row.latency_ms;
  }
  return best;
}

}  // namespace migserve::profile
