// The canonical profile CSV (DESIGN 3):
//   model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb
// header required, columns in any order, procs and memory_gb optional.
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

// Returns the table as canonical CSV, header first, rows in table order.
std::string FormatProfileCsv(const ProfileTable& table);

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_PROFILE_CSV_H_
