// An open-loop load generator for the real-proxy tests: requests are sent
// at the moments of a renewal process (gamma gaps of a given coefficient of
// variation; 1: Poisson) whether or not earlier ones were answered, each to
// one of the proxies at random, all from one thread through libcurl's multi
// interface. A request's latency counts from the moment it was due, so a
// late send is never hidden.
#ifndef MIGSERVE_PROXY_TESTING_OPEN_LOOP_LOAD_H_
#define MIGSERVE_PROXY_TESTING_OPEN_LOOP_LOAD_H_

#include <cstdint>
#include <string>
#include <vector>

namespace migserve::proxy {

struct LoadOptions {
  std::vector<int> proxies;  // ports on 127.0.0.1
  std::string path;          // e.g. /v2/models/m/infer
  std::string service;       // sent as the migserve-service header; "": not
  double rate = 1;           // requests per second
  double cv = 1;             // of the gaps
  double duration_s = 1;     // requests are due in [0, duration)
  double warmup_s = 0;       // those due before are not counted
  uint64_t seed = 1;
};

struct LoadResult {
  std::vector<double> latencies_ms;  // of counted requests answered 200
  long sent = 0;
  long failed = 0;  // no answer, or not 200 (counted or not)
};

LoadResult RunOpenLoop(const LoadOptions& options);

// The q-quantile (0..1) of `values` (nearest rank); 0 if empty.
double Quantile(std::vector<double> values, double q);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_OPEN_LOOP_LOAD_H_
