// The running program's build id: the GNU build-id note the linker writes
// (a hash of the program's code and data), so that a value computed by one
// build is never taken for another's.
#ifndef MIGSERVE_UTIL_BUILD_ID_H_
#define MIGSERVE_UTIL_BUILD_ID_H_

#include <string>

namespace migserve {

// The main program's build id in hex, or "" if it was linked without one.
std::string BuildId();

}  // namespace migserve

#endif  // MIGSERVE_UTIL_BUILD_ID_H_
