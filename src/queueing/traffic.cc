#include "queueing/traffic.h"

#include <array>

namespace migserve::queueing {
namespace {

constexpr std::array<int, 32> kLevels = {
    1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
    18, 20, 22, 24, 26, 28, 30, 32, 36, 40, 44, 48, 52, 56, 60, 64};

// The largest level at most `ratio`.
int LevelBelow(double ratio) {
  int level = 1;
  for (int k : kLevels) {
    if (k <= ratio) level = k;
  }
  return level;
}

// The smallest level at least `ratio` (the last if none).
int LevelAbove(double ratio) {
  for (int k : kLevels) {
    if (k >= ratio) return k;
  }
  return kLevels.back();
}

}  // namespace

ArrivalShape ShapeAt(const Traffic& traffic, double rate) {
  ArrivalShape shape{.cv = traffic.cv};
  if (!(traffic.service_rate > 0 && rate > 0)) return shape;
  double ratio = traffic.service_rate / rate;
  switch (traffic.router.traits().spreading) {
    case Spreading::kRotation:
      shape.channels = traffic.router_replicas;
      shape.every = LevelBelow(ratio);
      // Every request of every proxy: the stream itself.
      if (shape.every == 1) shape.channels = 1;
      break;
    case Spreading::kThinning:
      // Thinning a bursty stream at random leaves it less bursty, a smooth
      // one less smooth: the level on the side nearer the unthinned stream
      // for cv > 1, nearer Poisson for cv < 1.
      if (traffic.cv > 1) shape.thin = LevelBelow(ratio);
      if (traffic.cv < 1) shape.thin = LevelAbove(ratio);
      break;
  }
  return shape;
}

Traffic PickedPerRequest(Traffic traffic) {
  // The random router's spreading: a pick per request, by weight.
  traffic.router = *ParseRouter("random");
  return traffic;
}

double DispersionIndex(const ArrivalShape& shape) {
  return (1 + (shape.cv * shape.cv - 1) / shape.thin) / shape.every;
}

}  // namespace migserve::queueing
