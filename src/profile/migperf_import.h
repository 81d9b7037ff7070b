// MIGPerf's (MIGProfiler's) benchmark CSVs as profile rows (Zhang et al.,
// "MIGPerf", arXiv 2301.00407). docs/formats.md describes the columns read.
#ifndef MIGSERVE_PROFILE_MIGPERF_IMPORT_H_
#define MIGSERVE_PROFILE_MIGPERF_IMPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "profile/profile_table.h"
#include "util/status_or.h"

namespace migserve::profile {

// Converts one MIGPerf CSV (`path` names it) measured on `gpu`, with a
// warning if its throughput was recomputed. Instances
// are named by mig_profile, or by instance_memory in GB (A100-40GB: 5, 10,
// 20, 40 are 1g.5gb, 2g.10gb, 3g.20gb, 7g.40gb). latency_ms is the mean
// batch latency; throughput the file's, unless it differs from batch_size
// x 1000 / latency by more than 5% (as in the A100-80GB NLP file, which
// counted 3 samples a batch), then that; memory_gb is fb_used_mean MiB /
// 1024.
Status ImportMigPerfCsv(std::string_view text, const std::string& path,
                        const std::string& gpu, ImportedProfiles* out);

// Every *.csv under `dir`, in path order; the GPU comes from a directory
// named A100-80g (A100-SXM4-80GB) or A100-40g (A100-SXM4-40GB) on the way,
// as in MIGProfiler's data/ tree.
StatusOr<ImportedProfiles> ImportMigPerf(const std::string& dir);

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_MIGPERF_IMPORT_H_
