#include "queueing/capacity_model.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "queueing/p99_capacity.h"

namespace migserve::queueing {
namespace {

BatcherConfig BatcherOf(const profile::ProfileRow& row) {
  return {.max_batch = row.batch, .workers = row.procs};
}

// Returns true if `row` may be credited with more than `capacity`.
bool Beats(const profile::ProfileTable& table, const profile::ProfileRow& row,
           const ServiceTerms& terms, double capacity) {
  if (terms.model == CapacityModel::kPaper) return row.throughput >= capacity;
  return row.throughput >= capacity &&
         QuantileHolds(BatchCurve::Of(table, row), BatcherOf(row), terms.slo_ms,
                       terms.service_rate, capacity);
}

}  // namespace

std::string_view CapacityModelName(CapacityModel model) {
  return model == CapacityModel::kP99 ? "p99" : "paper";
}

std::optional<CapacityModel> ParseCapacityModel(std::string_view name) {
  if (name == "p99") return CapacityModel::kP99;
  if (name == "paper") return CapacityModel::kPaper;
  return std::nullopt;
}

double RowCapacity(const profile::ProfileTable& table,
                   const profile::ProfileRow& row, const ServiceTerms& terms) {
  if (terms.model == CapacityModel::kPaper) return row.throughput;
  return QuantileCapacity(BatchCurve::Of(table, row), BatcherOf(row),
                          terms.slo_ms, terms.service_rate);
}

Credit BestCredit(const profile::ProfileTable& table, const mig::GpuModel& gpu,
                  int profile_index, const std::string& model,
                  const ServiceTerms& terms) {
  const mig::Profile& profile = gpu.profiles[profile_index];
  std::vector<const profile::ProfileRow*> fits;
  for (const profile::ProfileRow& row : table.rows) {
    if (row.model == model && row.gpu == gpu.name &&
        row.profile == profile.name &&
        profile::RowFits(row, profile, terms.limits)) {
      fits.push_back(&row);
    }
  }
  // A row's capacity never exceeds its throughput: visiting rows by
  // throughput, the search stops at the first that cannot beat the best.
  std::sort(fits.begin(), fits.end(),
            [](const profile::ProfileRow* a, const profile::ProfileRow* b) {
              return a->throughput > b->throughput;
            });
  Credit best;
  for (const profile::ProfileRow* row : fits) {
    if (best.row != nullptr && row->throughput < best.capacity) break;
    if (best.row != nullptr && !Beats(table, *row, terms, best.capacity)) {
      continue;
    }
    double capacity = RowCapacity(table, *row, terms);
    if (capacity <= 0) continue;
    if (best.row == nullptr ||
        std::make_tuple(-capacity, row->latency_ms, row->batch, row->procs) <
            std::make_tuple(-best.capacity, best.row->latency_ms,
                            best.row->batch, best.row->procs)) {
      best = {row, capacity};
    }
  }
  return best;
}

}  // namespace migserve::queueing
