#include "cluster/gpu_id.h"

#include <fmt/format.h>

#include "boundary/csv.h"
#include "deployment/deployment.h"

namespace migserve::cluster {

std::string GpuId::ToString() const {
  return fmt::format("{}/{}", node, index);
}

std::optional<GpuId> ParseGpuId(std::string_view text) {
  size_t slash = text.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  GpuId id{std::string(text.substr(0, slash)), 0};
  if (!ParseInt(text.substr(slash + 1), &id.index) || id.index < 0) {
    return std::nullopt;
  }
  return id;
}

GpuId UnplacedGpuId(int id, int gpus_per_node) {
  return {deployment::UnplacedNode(id, gpus_per_node), id % gpus_per_node};
}

}  // namespace migserve::cluster
