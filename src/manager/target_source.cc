#include "manager/target_source.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <thread>

#include "deployment/deployment_json.h"
#include "deployment/validator.h"
#include "util/json_fields.h"

namespace migserve::manager {

Status TargetOptions::Validate() const {
  if (file.empty() == configmap.empty()) {
    return Status::InvalidArgument(
        "give exactly one of --target and --target-configmap");
  }
  return Status::Ok();
}

TargetSource::TargetSource(const TargetOptions& options,
                           kube::KubeClient* client)
    : options_(options),
      client_(client),
      map_(client, fmt::format("/api/v1/namespaces/{}/configmaps", Namespace()),
           "fieldSelector=" +
               kube::KubeClient::Escape("metadata.name=" + options.configmap),
           static_cast<int>(options.resync_s)),
      key_(client, Namespace(), options.configmap, options.key) {}

StatusOr<deployment::Deployment> TargetSource::Load() {
  StatusOr<deployment::Deployment> target = Read();
  if (target.ok()) {
    MIGSERVE_RETURN_IF_ERROR(deployment::CheckModelledCredits(*target));
  }
  if (target.ok() && options_.profiles) {
    MIGSERVE_RETURN_IF_ERROR(
        deployment::CheckDeclaredThroughputs(*target, *options_.profiles));
  }
  return target;
}

StatusOr<deployment::Deployment> TargetSource::Read() {
  if (!options_.file.empty()) {
    std::error_code error;
    mtime_ = std::filesystem::last_write_time(options_.file, error);
    return deployment::LoadDeployment(options_.file);
  }
  MIGSERVE_ASSIGN_OR_RETURN(text_, key_.Read());
  version_ = key_.version();
  return deployment::ParseDeployment(text_, key_.Describe());
}

bool TargetSource::Changed() {
  if (!options_.file.empty()) {
    std::error_code error;
    return std::filesystem::last_write_time(options_.file, error) != mtime_;
  }
  if (!map_.Get().ok()) return false;  // the cache says why, next time
  std::optional<nlohmann::json> map = map_.Find(options_.configmap);
  if (!map) return false;
  std::optional<std::string> version =
      StringField(*map, "metadata", "resourceVersion");
  if (!version || *version == version_) return false;
  std::optional<std::string> text =
      StringField(*map, "data", options_.key.c_str());
  if (text && *text == text_) {
    version_ = *version;  // another key changed
    return false;
  }
  return true;
}

void TargetSource::Wait(const std::atomic<bool>& stop) {
  auto until = std::chrono::steady_clock::now() +
               std::chrono::duration<double>(options_.resync_s);
  while (!stop && std::chrono::steady_clock::now() < until && !Changed()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

std::string TargetSource::Namespace() const {
  return client_->config().namespace_;
}

}  // namespace migserve::manager
