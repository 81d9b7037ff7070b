// Erlang's (Crommelin's) closed form for the M/D/1 queue, for tests.
#ifndef MIGSERVE_QUEUEING_MD1_TEST_UTIL_H_
#define MIGSERVE_QUEUEING_MD1_TEST_UTIL_H_

#include <cmath>

namespace migserve::testing {

// P(wait <= t) in the M/D/1 queue of service time 1 at load rho:
// (1 - rho) sum_{k=0}^{floor t} (rho (k - t))^k / k! e^{-rho (k - t)}.
inline double MD1WaitCdf(double rho, double t) {
  double sum = 0;
  for (int k = 0; k <= static_cast<int>(std::floor(t)); ++k) {
    double x = rho * (k - t);
    sum += std::pow(x, k) / std::tgamma(k + 1) * std::exp(-x);
  }
  return (1 - rho) * sum;
}

}  // namespace migserve::testing

#endif  // MIGSERVE_QUEUEING_MD1_TEST_UTIL_H_
