// A GPU's identity in a cluster: its node and its device index there (as
// NVML, nvidia-smi and mig-parted count). Unlike a position in a listing it
// does not change when other nodes join or leave.
#ifndef MIGSERVE_CLUSTER_GPU_ID_H_
#define MIGSERVE_CLUSTER_GPU_ID_H_

#include <compare>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace migserve::cluster {

struct GpuId {
  std::string node;
  int index = 0;

  auto operator<=>(const GpuId&) const = default;

  // Returns "node/index", the form messages and flags use.
  std::string ToString() const;
};

inline std::ostream& operator<<(std::ostream& out, const GpuId& id) {
  return out << id.ToString();
}

// Parses "node/index". Returns nullopt unless `text` has a non-empty node
// and a non-negative integer index.
std::optional<GpuId> ParseGpuId(std::string_view text);

// The identity a GPU of an unplaced deployment gets: GPU `id` of a
// deployment without nodes is on node-<id / gpus_per_node>, at index
// id % gpus_per_node.
GpuId UnplacedGpuId(int id, int gpus_per_node);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_GPU_ID_H_
