// NvmlApi over NVIDIA's library, opened at run time with dlopen (the way
// go-nvml does), so the project builds and tests without NVIDIA's driver.
#ifndef MIGSERVE_AGENT_DLOPEN_NVML_H_
#define MIGSERVE_AGENT_DLOPEN_NVML_H_

#include <memory>
#include <string>

#include "agent/nvml_api.h"
#include "util/status_or.h"

namespace migserve::agent {

inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";

// Opens `path` (a file name is searched as dlopen does) and looks up every
// call. Returns Unavailable naming the library or the missing symbol.
StatusOr<std::unique_ptr<NvmlApi>> OpenNvml(const std::string& path);

}  // namespace migserve::agent

#endif  // MIGSERVE_AGENT_DLOPEN_NVML_H_
