#include "queueing/arrivals.h"

#include <fmt/format.h>

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

}  // namespace migserve::queueing
