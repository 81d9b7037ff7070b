// Whole-file reads of what comes from outside, each bounded: the one way
// migserve reads a file, standard input or a pipe (docs/formats.md, the
// limit of one input).
#ifndef MIGSERVE_BOUNDARY_INPUT_FILE_H_
#define MIGSERVE_BOUNDARY_INPUT_FILE_H_

#include <string>

#include "util/status_or.h"

namespace migserve {

// The most bytes ReadFile reads of one input: 256 MiB, or
// MIGSERVE_MAX_INPUT_MB mebibytes where that is set: a whole number from 1
// to 1048576, else InvalidArgument naming the variable (a limit set wrong
// is never ignored in silence).
StatusOr<long long> MaxInputBytes();

// Returns the contents of `path`, or NotFound naming the path. "-" is
// standard input, read at the first call and the same text at every call;
// so is any path that is not a regular file (a FIFO, `<(...)`). An input
// larger than MaxInputBytes() is refused (InvalidArgument naming the path
// and the limit) without reading it whole: a regular file by its size,
// anything else (/dev/zero, an endless pipe) once that much has come.
StatusOr<std::string> ReadFile(const std::string& path);

// The last `max_bytes` bytes of the regular file `path` (all of it if it
// is shorter), without reading the rest: a log's tail for a message, whatever
// the log has grown to. NotFound naming the path if it cannot be opened.
StatusOr<std::string> ReadTail(const std::string& path, long long max_bytes);

// The first `max_bytes` bytes of `path` (all of it if it is shorter),
// without reading the rest: a line the kernel writes (/proc/<pid>/stat),
// whatever the file turns out to be. NotFound naming the path if it cannot
// be opened.
StatusOr<std::string> ReadHead(const std::string& path, long long max_bytes);

// True if ReadFile read the file at `path` (the same file: device and
// inode) since the last ForgetReads: an output must not overwrite an input
// of the same command.
bool WasRead(const std::string& path);
void ForgetReads();

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_INPUT_FILE_H_
