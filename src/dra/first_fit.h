// The Kubernetes scheduler's DRA allocation over one node's GPUs as NVIDIA's
// driver announces them under DynamicMIG (nvidia_devices.h): a claim's
// request gets the first device, in ResourceSlice order, that its selectors
// accept and whose counters are still free. The allocator scores nothing
// (KEP-4970 is open), so where a request may land on several devices the
// order alone decides: for one profile on one GPU, the lowest free start.
//
// The model: the GPUs' slices in minor order (the driver publishes one per
// GPU, in minor order), each slice's devices in name order; a device's
// counters are free when its instance joins the GPU's allocated instances
// in a legal layout (mig::IsLegal: memory slices disjoint, compute within
// the GPU's, per-profile limits), which is what the driver's memory-slice,
// multiprocessor and engine counters enforce.
#ifndef MIGSERVE_DRA_FIRST_FIT_H_
#define MIGSERVE_DRA_FIRST_FIT_H_

#include <optional>
#include <vector>

#include "dra/nvidia_devices.h"
#include "mig/gpu_model.h"
#include "mig/layout.h"

namespace migserve::dra {

// A claim with one request: a profile (index into GpuModel::profiles), on
// GPU `gpu` (a selector on the parent's UUID) or, with -1, on any GPU of
// the node.
struct DeviceRequest {
  int profile = 0;
  int gpu = -1;
};

// Where a request landed.
struct Allocation {
  int gpu = 0;
  mig::Instance instance;
  bool operator==(const Allocation&) const = default;
};

class FirstFitNode {
 public:
  // A node with `gpus` empty GPUs of `model` (REQUIRES: `model` outlives
  // the node).
  FirstFitNode(const mig::GpuModel& model, int gpus);

  // The device first-fit gives `request`, without allocating it; nullopt if
  // none fits (the pod would stay Pending).
  std::optional<Allocation> Peek(const DeviceRequest& request) const;

  // Allocates what Peek gives; nullopt, allocating nothing, if none fits.
  std::optional<Allocation> Allocate(const DeviceRequest& request);

  // Marks `allocation` allocated, wherever first-fit would put its request
  // (a claim allocated before this model saw the node). Returns false,
  // taking nothing, if it does not fit beside what the GPU holds.
  bool Take(const Allocation& allocation);

  // Frees `allocation` (its claim deleted). Returns false if it was not
  // allocated.
  bool Release(const Allocation& allocation);

  // The instances allocated on GPU `gpu`.
  const mig::Layout& layout(int gpu) const { return layouts_[gpu]; }
  int gpus() const { return static_cast<int>(layouts_.size()); }
  const mig::GpuModel& model() const { return model_; }

 private:
  const mig::GpuModel& model_;
  std::vector<MigDevice> order_;  // one GPU's devices, as each slice lists
  std::vector<mig::Layout> layouts_;
};

}  // namespace migserve::dra

#endif  // MIGSERVE_DRA_FIRST_FIT_H_
