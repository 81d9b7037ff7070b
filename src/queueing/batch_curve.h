// How long one process of an instance takes to serve a batch of b requests,
// from the measured rows of a (model, GPU, profile, processes) point
// (docs/capacity.md): a batch holds its process for the longer of the
// measured latency and the time the measured throughput implies
// (processes x batch / throughput), so that a simulated replica neither
// answers faster nor serves more than was measured.
#ifndef MIGSERVE_QUEUEING_BATCH_CURVE_H_
#define MIGSERVE_QUEUEING_BATCH_CURVE_H_

#include <utility>
#include <vector>

#include "profile/profile_table.h"

namespace migserve::queueing {

// The milliseconds a batch of `row` holds one of its processes.
double BatchMs(const profile::ProfileRow& row);

class BatchCurve {
 public:
  using Point = std::pair<int, double>;  // (batch, milliseconds)

  // `points` sorted by batch, batches distinct and positive, times > 0.
  explicit BatchCurve(std::vector<Point> points);

  // The curve of `row`'s replica: the rows measuring the same model, GPU,
  // profile and processes with a batch up to `row.batch` and a positive
  // throughput.
  static BatchCurve Of(const profile::ProfileTable& table,
                       const profile::ProfileRow& row);

  // Milliseconds for a batch of `batch`: linear between measured batches,
  // the smallest measured batch's time below it (never faster than
  // measured), the largest's slope above it.
  double Ms(int batch) const;

  const std::vector<Point>& points() const { return points_; }

 private:
  std::vector<Point> points_;
};

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_BATCH_CURVE_H_
