#include "queueing/batch_curve.h"

#include <algorithm>
#include <cassert>

namespace migserve::queueing {

double BatchMs(const profile::ProfileRow& row) {
  return std::max(row.latency_ms,
                  1000.0 * row.procs * row.batch / row.throughput);
}

BatchCurve::BatchCurve(std::vector<Point> points) : points_(std::move(points)) {
  assert(!points_.empty());
}

BatchCurve BatchCurve::Of(const profile::ProfileTable& table,
                          const profile::ProfileRow& row) {
  std::vector<Point> points;
  for (const profile::ProfileRow& r : table.rows) {
    if (r.model == row.model && r.gpu == row.gpu && r.profile == row.profile &&
        r.procs == row.procs && r.batch <= row.batch && r.throughput > 0) {
      points.emplace_back(r.batch, BatchMs(r));
    }
  }
  if (points.empty()) points.emplace_back(row.batch, BatchMs(row));
  std::sort(points.begin(), points.end());
  return BatchCurve(std::move(points));
}

double BatchCurve::Ms(int batch) const {
  if (batch <= points_.front().first) return points_.front().second;
  auto hi = std::lower_bound(points_.begin(), points_.end(), Point{batch, 0});
  if (hi == points_.end()) hi = points_.end() - 1;
  if (hi->first == batch) return hi->second;
  if (hi == points_.begin()) return hi->second;
  auto lo = hi - 1;
  double slope = (hi->second - lo->second) / (hi->first - lo->first);
  return lo->second + slope * (batch - lo->first);
}

}  // namespace migserve::queueing
