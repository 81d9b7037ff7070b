#include "manager/target_source.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <thread>

#include "boundary/json_fields.h"
#include "deployment/deployment_json.h"
#include "deployment/validator.h"
#include "kube/serving_target.h"

namespace migserve::manager {

Status TargetOptions::Validate() const {
  if (!file.empty() + !resource.empty() + !configmap.empty() != 1) {
    return Status::InvalidArgument(
        "give exactly one of --target, --target-resource and "
        "--target-configmap");
  }
  return Status::Ok();
}

TargetSource::TargetSource(const TargetOptions& options,
                           kube::KubeClient* client)
    : options_(options),
      client_(client),
      watched_(client, Collection(),
               "fieldSelector=" +
                   kube::KubeClient::Escape("metadata.name=" + Name()),
               static_cast<int>(options.resync_s)),
      key_(client, Namespace(), options.configmap, options.key) {}

StatusOr<deployment::Deployment> TargetSource::Load() {
  StatusOr<deployment::Deployment> target = Read();
  if (target.ok()) {
    MIGSERVE_RETURN_IF_ERROR(
        deployment::CheckDeclaredCredits(*target, options_.profiles.get()));
  }
  return target;
}

StatusOr<deployment::Deployment> TargetSource::Read() {
  if (!options_.file.empty()) {
    std::error_code error;
    mtime_ = std::filesystem::last_write_time(options_.file, error);
    return deployment::LoadDeployment(options_.file);
  }
  if (!options_.resource.empty()) {
    std::string where =
        fmt::format("servingtarget {}/{}", Namespace(), options_.resource);
    StatusOr<nlohmann::json> got = client_->Get(ResourcePath());
    if (got.status().code() == Status::Code::kNotFound) {
      // Say which is missing: the custom resource's definition, or this
      // one object.
      bool served =
          client_->Get("/apis/" + std::string(kube::kServingTargetApiVersion))
              .ok();
      return Status::NotFound(
          served ? fmt::format("{}: not found (migserve export "
                               "--target-resource {} writes one)",
                               where, options_.resource)
                 : where +
                       ": this cluster serves no ServingTarget: apply "
                       "its definition, deploy/base/crd.yaml (the "
                       "install does)");
    }
    MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json object, std::move(got));
    generation_ = object["metadata"].value("generation", 0L);
    if (!object.contains("spec") || !object["spec"].is_object()) {
      return Status::InvalidArgument(where + ": no spec");
    }
    return deployment::ParseDeployment(object["spec"].dump(), where + " spec");
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
  if (!watched_.Get().ok()) return false;  // the cache says why, next time
  std::optional<nlohmann::json> map = watched_.Find(Name());
  if (!map) return false;
  if (!options_.resource.empty()) {
    std::optional<long> generation =
        map->contains("metadata")
            ? std::optional<long>((*map)["metadata"].value("generation", 0L))
            : std::nullopt;
    return generation && *generation != generation_;
  }
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

std::string TargetSource::ResourcePath() const {
  return options_.resource.empty() ? "" : Collection() + "/" + Name();
}

std::string TargetSource::Collection() const {
  return options_.resource.empty()
             ? fmt::format("/api/v1/namespaces/{}/configmaps", Namespace())
             : kube::ServingTargetsPath(Namespace());
}

std::string TargetSource::Name() const {
  return options_.resource.empty() ? options_.configmap : options_.resource;
}

std::string TargetSource::Namespace() const {
  return client_->config().namespace_;
}

}  // namespace migserve::manager
