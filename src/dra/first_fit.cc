#include "dra/first_fit.h"

namespace migserve::dra {

namespace {

// Every profile can be requested: the driver announces all of them.
const mig::MigOptions kAllProfiles{.legacy_4g3g = false,
                                   .optional_profiles = true};

}  // namespace

FirstFitNode::FirstFitNode(const mig::GpuModel& model, int gpus)
    : model_(model),
      order_(DynamicMigDevices(model, 0)),
      layouts_(static_cast<size_t>(gpus)) {}

std::optional<Allocation> FirstFitNode::Peek(
    const DeviceRequest& request) const {
  for (int gpu = 0; gpu < gpus(); ++gpu) {
    if (request.gpu >= 0 && request.gpu != gpu) continue;
    for (const MigDevice& device : order_) {
      if (device.instance.profile != request.profile) continue;
      mig::Layout with = layouts_[gpu];
      if (with.Contains(device.instance)) continue;
      with.Add(device.instance);
      if (mig::IsLegal(model_, with, kAllProfiles)) {
        return Allocation{gpu, device.instance};
      }
    }
  }
  return std::nullopt;
}

std::optional<Allocation> FirstFitNode::Allocate(const DeviceRequest& request) {
  std::optional<Allocation> a = Peek(request);
  if (a) layouts_[a->gpu].Add(a->instance);
  return a;
}

bool FirstFitNode::Take(const Allocation& allocation) {
  if (allocation.gpu < 0 || allocation.gpu >= gpus()) return false;
  mig::Layout with = layouts_[allocation.gpu];
  if (with.Contains(allocation.instance)) return false;
  with.Add(allocation.instance);
  if (!mig::IsLegal(model_, with, kAllProfiles)) return false;
  layouts_[allocation.gpu] = std::move(with);
  return true;
}

bool FirstFitNode::Release(const Allocation& allocation) {
  if (allocation.gpu < 0 || allocation.gpu >= gpus()) return false;
  return layouts_[allocation.gpu].Remove(allocation.instance);
}

}  // namespace migserve::dra
