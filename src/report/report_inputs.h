// What `report` draws from other commands' JSON, typed: compare's rows
// (`compare --format json`), serve's latencies per service (`serve
// --format json`) and a replayed day (`replay --format json`). The parsers name
// the file and field of what is wrong, so that drawing never meets a malformed
// input.
#ifndef MIGSERVE_REPORT_REPORT_INPUTS_H_
#define MIGSERVE_REPORT_REPORT_INPUTS_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/status_or.h"

namespace migserve::report {

// One row of `compare`: an algorithm's GPUs (none if it cannot serve the
// workload) and status, or a bound.
struct ComparedRow {
  std::string name;
  bool bound = false;
  std::optional<double> gpus;
  std::string status;
  std::string note;
};

// One service of `serve`: its request latencies by quantile (p50, p90,
// p99, in that order) against its SLO, milliseconds.
struct ServedService {
  std::string service;
  std::vector<std::pair<std::string, double>> latency_ms;
  double slo_ms = 0;
  double within_slo = 0;  // share of requests within the SLO
};

// A day as `replay` replayed it (docs/formats.md, "Replay report JSON"):
// each way of provisioning measured, the policy's moves, and its cluster
// over time.
struct ReplayedDay {
  struct Run {
    double gpu_hours = 0;
    double short_minutes = 0;
    std::map<std::string, double> short_minutes_by_service;
    int transitions = 0;
    int peak_gpus = 0;
  };
  struct Event {
    double time_s = 0;
    std::string move;  // up or down
    std::string reason;
    int gpus_before = 0;
    int gpus_after = 0;
    int pod_starts = 0;
    double makespan_s = 0;
    std::string problem;
  };
  // From time_s on: GPUs in use and each service's ready capacity.
  struct Sample {
    double time_s = 0;
    int gpus = 0;
    std::vector<double> capacity;  // per service, in `services` order
  };
  std::vector<std::string> services;
  double start_s = 0;
  double end_s = 0;
  Run policy;
  Run static_peak;
  Run oracle;
  std::vector<Event> events;
  std::vector<Sample> samples;
};

// The rates the services received: rates[k][s] is services[s]'s rate
// (req/s) from times_s[k] until times_s[k + 1]; the last moment is the end.
struct ObservedRates {
  std::vector<std::string> services;
  std::vector<double> times_s;
  std::vector<std::vector<double>> rates;
};

// Parse what `compare --format json`, `serve --format json` and `replay
// --format json` write, read from `source`. Return InvalidArgument naming
// the source and the field (for a replay, also a sample whose capacities
// do not match the services, or moments out of order).
StatusOr<std::vector<ComparedRow>> ParseCompareJson(const std::string& text,
                                                    const std::string& source);
StatusOr<std::vector<ServedService>> ParseServeJson(const std::string& text,
                                                    const std::string& source);
StatusOr<ReplayedDay> ParseReplayJson(const std::string& text,
                                      const std::string& source);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_REPORT_INPUTS_H_
