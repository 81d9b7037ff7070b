#include "queueing/arrivals.h"

#include <fmt/format.h>

#include <cmath>

namespace migserve::queueing {

Status ArrivalProcess::Validate() const {
  if (cv > 0) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "arrivals: the coefficient of variation must be > 0, got {}", cv));
}

std::optional<ArrivalProcess::Kind> ParseArrivalKind(std::string_view name) {
  if (name == "poisson") return ArrivalProcess::Kind::kPoisson;
  if (name == "gamma") return ArrivalProcess::Kind::kGamma;
  return std::nullopt;
}

// A gamma gap of shape k = 1 / cv^2 and scale 1 / (rate k) has mean 1 / rate
// and coefficient of variation cv.
ArrivalStream::ArrivalStream(const ArrivalProcess& process, double rate,
                             uint64_t seed)
    : rng_(seed),
      exponential_(rate),
      gamma_(1 / (process.cv * process.cv), process.cv * process.cv / rate),
      poisson_(process.kind == ArrivalProcess::Kind::kPoisson) {}

double ArrivalStream::Next() {
  now_ += poisson_ ? exponential_(rng_) : gamma_(rng_);
  return now_;
}

namespace {

ArrivalProcess GapsOf(double cv) {
  return cv == 1 ? ArrivalProcess{}
                 : ArrivalProcess{ArrivalProcess::Kind::kGamma, cv};
}

}  // namespace

ShapedStream::ShapedStream(const ArrivalShape& shape, uint64_t seed)
    : shape_(shape), rng_(seed) {
  if (shape.cv == 1 || (shape.thin == 1 && shape.channels == 1)) {
    // Every k-th gap of a gamma stream of cv c is a gamma gap of cv
    // c/sqrt(k); thinned Poisson stays Poisson; Poisson spread at random
    // over channels is a Poisson stream per channel.
    for (int c = 0; c < shape.channels; ++c) {
      channels_.emplace_back(GapsOf(shape.cv / std::sqrt(shape.every)),
                             1.0 / shape.channels, seed + c);
      next_.push_back(channels_.back().Next());
    }
    return;
  }
  // Gamma gaps of cv c have shape 1 / c^2; at the service's rate (thin x
  // every for a unit-rate replica stream), scale c^2 / rate.
  shape_k_ = 1 / (shape.cv * shape.cv);
  scale_ = shape.cv * shape.cv / (1.0 * shape.thin * shape.every);
  gap_rng_.seed(seed);
  std::uniform_int_distribution<int> phase(0, shape.every - 1);
  for (int c = 0; c < shape.channels; ++c) count_.push_back(phase(rng_));
}

double ShapedStream::Next() {
  if (count_.empty()) {
    size_t first = 0;
    for (size_t c = 1; c < next_.size(); ++c) {
      if (next_[c] < next_[first]) first = c;
    }
    double t = next_[first];
    next_[first] = channels_[first].Next();
    return t;
  }
  // The requests a random thinning skips before the one it keeps are
  // geometric.
  std::geometric_distribution<long> skipped(1.0 / shape_.thin);
  std::uniform_int_distribution<int> channel(0, shape_.channels - 1);
  for (;;) {
    since_ += 1 + (shape_.thin > 1 ? skipped(rng_) : 0);
    int c = shape_.channels > 1 ? channel(rng_) : 0;
    if (++count_[c] % shape_.every != 0) continue;
    now_ += gap_(gap_rng_, std::gamma_distribution<double>::param_type(
                               since_ * shape_k_, scale_));
    since_ = 0;
    return now_;
  }
}

}  // namespace migserve::queueing
