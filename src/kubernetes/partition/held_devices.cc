#include "kubernetes/partition/held_devices.h"

#include <utility>

#include "boundary/json_fields.h"
#include "kubernetes/dra_objects.h"

namespace migserve::kubernetes {

HeldDevices::HeldDevices(kube::KubeClient* client, Own own, double recheck_s)
    : client_(client),
      own_(std::move(own)),
      recheck_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(recheck_s))) {}

std::string HeldDevices::HolderOf(const std::string& node,
                                  const std::string& device) const {
  StatusOr<std::string> holder = Find(node, device);
  return holder.ok() ? *holder : "";
}

StatusOr<std::string> HeldDevices::Find(const std::string& node,
                                        const std::string& device) const {
  // Every namespace's: the holder may be anyone's.
  MIGSERVE_ASSIGN_OR_RETURN(
      nlohmann::json list,
      client_->Get("/apis/resource.k8s.io/v1/resourceclaims"));
  const nlohmann::json* items = ArrayAt(list, "items");
  if (items == nullptr) {
    return Status::Unavailable("the claims' list has no items");
  }
  for (const nlohmann::json& claim : *items) {
    const nlohmann::json* meta = ObjectAt(claim, "metadata");
    if (meta == nullptr) continue;
    std::string namespace_ = StringAt(*meta, "namespace").value_or("");
    std::string name = StringAt(*meta, "name").value_or("");
    if (own_(namespace_, name)) continue;
    const nlohmann::json* results = AllocationResults(claim);
    if (results == nullptr) continue;
    for (const nlohmann::json& r : *results) {
      if (StringAt(r, "pool").value_or("") == node &&
          StringAt(r, "device").value_or("") == device) {
        return namespace_ + "/" + name;
      }
    }
  }
  return std::string();
}

void HeldDevices::Hold(const GpuId& gpu, const std::string& device,
                       const std::string& holder) {
  if (held_.empty()) looked_ = std::chrono::steady_clock::now();
  held_[gpu] = {device, holder};
  changed_.insert(gpu.node);
}

std::string HeldDevices::Holder(const GpuId& gpu) const {
  auto it = held_.find(gpu);
  return it == held_.end() ? "" : it->second.holder;
}

std::set<std::string> HeldDevices::Recheck() {
  auto now = std::chrono::steady_clock::now();
  if (!held_.empty() && now - looked_ >= recheck_) {
    looked_ = now;
    for (auto it = held_.begin(); it != held_.end();) {
      StatusOr<std::string> holder = Find(it->first.node, it->second.device);
      if (!holder.ok() || *holder == it->second.holder) {
        ++it;
        continue;
      }
      changed_.insert(it->first.node);
      if (holder->empty()) {
        it = held_.erase(it);
      } else {
        it->second.holder = *holder;
        ++it;
      }
    }
  }
  return std::exchange(changed_, {});
}

}  // namespace migserve::kubernetes
