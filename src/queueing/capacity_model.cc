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

// The p99 credit of `row`, whose batch curve is `curve`.
double P99Capacity(const BatchCurve& curve, const profile::ProfileRow& row,
                   const ServiceTerms& terms) {
  return QuantileCapacity(curve, BatcherOf(row), terms.slo_ms, terms.traffic);
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
  return P99Capacity(BatchCurve::Of(table, row), row, terms);
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
    double capacity = row->throughput;
    if (terms.model == CapacityModel::kP99) {
      // Simulated only if it holds the p99 at the best credit so far.
      BatchCurve curve = BatchCurve::Of(table, *row);
      if (best.row != nullptr &&
          !QuantileHolds(curve, BatcherOf(*row), terms.slo_ms, terms.traffic,
                         best.capacity)) {
        continue;
      }
      capacity = P99Capacity(curve, *row, terms);
    }
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
