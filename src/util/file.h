// Crash-safe writes (reads from outside: boundary/input_file.h).
#ifndef MIGSERVE_UTIL_FILE_H_
#define MIGSERVE_UTIL_FILE_H_

#include <string>
#include <utility>
#include <vector>

#include "util/status_or.h"

namespace migserve {

// Returns InvalidArgument naming the path if `path` is to be written but its
// directory does not exist; OK for "" and "-" (stdout).
Status CheckOutputDirectory(const std::string& path);

// Writes `contents` to a temporary file beside `path`, syncs and closes
// it, then renames it over `path`, so that a reader never sees a
// half-written file; a `path` that exists keeps its mode. A `path` that
// exists as a device, FIFO or socket (/dev/stdout, /dev/null) is written in
// place, never replaced. A failed write, sync or close (a full disk, a
// closed pipe) is an error, the old file left as it was. Returns
// InvalidArgument naming the path if its directory does not exist (a typo
// in a path must not create directories), Unavailable on a failed write.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

// Writes several files as one: every file to a temporary beside it first,
// and only when all are written (a full disk fails here, leaving every old
// file as it was and no temporary), renames each into place. A rename needs
// no space, so a reader sees the old set or the new set; a directory cannot
// be swapped atomically without dropping other files in it.
Status WriteFilesAtomic(
    const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace migserve

#endif  // MIGSERVE_UTIL_FILE_H_
