// The canonical profile CSV (docs/formats.md):
//   model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb
//   [,latency_p50_ms,latency_p90_ms,latency_p99_ms]
// header required, columns in any order; procs, memory_gb and the
// percentiles optional.
#ifndef MIGSERVE_PROFILE_PROFILE_CSV_H_
#define MIGSERVE_PROFILE_PROFILE_CSV_H_

#include <string>

#include "profile/profile_table.h"
#include "util/status_or.h"

namespace migserve::profile {

// Parses CSV `text` read from `source`. Every row's GPU must be in the
// catalog and its profile must exist on that GPU (aliases become canonical
// names). Returns InvalidArgument "source:line: field: reason" for a
// malformed row, an unknown GPU or profile, a negative number or a
// duplicated (model, gpu, profile, batch, procs) key.
StatusOr<ProfileTable> ParseProfileCsv(const std::string& text,
                                       const std::string& source);

// Reads and parses the file at `path`; NotFound if it cannot be read.
StatusOr<ProfileTable> LoadProfileCsv(const std::string& path);

// Returns the table as canonical CSV, header first, rows in table order;
// the percentile columns only when a row has one.
std::string FormatProfileCsv(const ProfileTable& table);

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_PROFILE_CSV_H_
