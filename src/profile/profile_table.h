// Measured serving performance: one row per (model, GPU, MIG profile, batch,
// MPS processes) point (DESIGN 3).
#ifndef MIGSERVE_PROFILE_PROFILE_TABLE_H_
#define MIGSERVE_PROFILE_PROFILE_TABLE_H_

#include <optional>
#include <string>
#include <vector>

namespace migserve::profile {

struct ProfileRow {
  std::string model;
  std::string gpu;
  std::string profile;  // canonical MIG profile name, e.g. 3g.40gb
  int batch = 1;
  int procs = 1;          // MPS processes on the instance
  double throughput = 0;  // whole instance, samples/s, all procs together
  // Milliseconds one batch takes on an idle instance, from its arrival to
  // its result (the median or mean of the measurement): the capacity
  // models' batch time (docs/formats.md).
  double latency_ms = 0;
  std::optional<double> memory_gb;
  // Request latency percentiles measured at the row's throughput, ms, as
  // the measuring tool reported them; carried for reference, no capacity
  // model reads them.
  std::optional<double> latency_p50_ms;
  std::optional<double> latency_p90_ms;
  std::optional<double> latency_p99_ms;
  int line = 0;  // line in the source file; 0 if made in memory
};

struct ProfileTable {
  std::string source;  // file the rows came from, for messages
  std::vector<ProfileRow> rows;

  // Returns true if any row measures `model` on `gpu`.
  bool HasModel(const std::string& model, const std::string& gpu) const;

  // Returns true if any row measures `model` on `profile` of `gpu`.
  bool Measures(const std::string& model, const std::string& gpu,
                const std::string& profile) const;

  // Returns the distinct model names measured on `gpu`, sorted.
  std::vector<std::string> Models(const std::string& gpu) const;
};

// What an importer read, and what the user should know about it.
struct ImportedProfiles {
  ProfileTable profiles;
  std::vector<std::string> warnings;
};

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_PROFILE_TABLE_H_
