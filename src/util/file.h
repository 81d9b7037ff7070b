// Whole-file reads and crash-safe writes.
#ifndef MIGSERVE_UTIL_FILE_H_
#define MIGSERVE_UTIL_FILE_H_

#include <string>

#include "util/status_or.h"

namespace migserve {

// Returns the contents of `path`, or NotFound naming the path.
StatusOr<std::string> ReadFile(const std::string& path);

// Writes `contents` to a temporary file beside `path`, then renames it over
// `path`, so that a reader never sees a half-written file. Creates missing
// parent directories. Returns Unavailable naming the path on failure.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

}  // namespace migserve

#endif  // MIGSERVE_UTIL_FILE_H_
