#include "profile/sweep.h"

namespace migserve::profile {

const SweepPoint& IdlePoint(const std::vector<SweepPoint>& points) {
  const SweepPoint* idle = &points.front();
  for (const SweepPoint& p : points) {
    if (p.load < idle->load ||
        (p.load == idle->load && p.idle_ms < idle->idle_ms)) {
      idle = &p;
    }
  }
  return *idle;
}

const SweepPoint* BestPoint(const std::vector<SweepPoint>& points,
                            std::optional<double> limit_ms) {
  const SweepPoint* best = nullptr;
  for (const SweepPoint& p : points) {
    if (limit_ms && p.p99_ms > *limit_ms) continue;
    if (!best || p.throughput > best->throughput) best = &p;
  }
  return best;
}

}  // namespace migserve::profile
