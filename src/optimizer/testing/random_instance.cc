#include "optimizer/testing/random_instance.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

namespace migserve::optimizer {

profile::ProfileRow Point(const std::string& model, const char* profile,
                          double throughput) {
  profile::ProfileRow row;
  row.model = model;
  row.gpu = kGpu;
  row.profile = profile;
  row.batch = 8;
  row.throughput = throughput;
  row.latency_ms = 10;
  return row;
}

Instance MakeInstance(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  Instance in;
  in.workload.capacity_model = queueing::CapacityModel::kPaper;
  in.profiles.source = "generated";
  in.workload.source = "generated";
  in.workload.gpu = kGpu;
  int services = 2 + static_cast<int>(rng() % 3);
  for (int j = 0; j < services; ++j) {
    std::string model = fmt::format("m{}", j);
    double base = 50 + 150 * unit(rng);
    double exponent = 0.6 + 0.8 * unit(rng);  // < 1 sub-linear, > 1 super
    for (int p = 0; p < 5; ++p) {
      double noise = 0.9 + 0.2 * unit(rng);
      profile::ProfileRow row = Point(
          model, kProfiles[p], base * std::pow(kSlices[p], exponent) * noise);
      // Some models do not fit the smallest instance.
      if (p == 0 && unit(rng) < 0.2) row.throughput = 0;
      in.profiles.rows.push_back(row);
    }
    double demand = base * (3 + 17 * unit(rng));
    in.workload.services.push_back({fmt::format("s{}", j), model,
                                    Rate::Of(std::round(demand)).value(), 100,
                                    0});
  }
  return in;
}

}  // namespace migserve::optimizer
