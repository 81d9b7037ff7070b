#include "kube/configmap_key.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "boundary/json_fields.h"

namespace migserve::kube {

ConfigMapKey::ConfigMapKey(KubeClient* client, std::string namespace_,
                           std::string name, std::string key)
    : client_(client),
      namespace_name_(std::move(namespace_)),
      name_(std::move(name)),
      key_(std::move(key)) {}

std::string ConfigMapKey::Describe() const {
  return fmt::format("configmap {}/{} key {}", namespace_name_, name_, key_);
}

std::string ConfigMapKey::Path() const {
  return fmt::format("/api/v1/namespaces/{}/configmaps/{}", namespace_name_,
                     name_);
}

StatusOr<std::string> ConfigMapKey::Read() {
  MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json map, client_->Get(Path()));
  version_ = StringField(map, "metadata", "resourceVersion").value_or("");
  const nlohmann::json* data = ObjectAt(map, "data");
  std::optional<std::string> text =
      data == nullptr ? std::nullopt : StringAt(*data, key_.c_str());
  if (!text) return Status::InvalidArgument(Describe() + ": missing");
  return *text;
}

Status ConfigMapKey::Write(const std::string& text) {
  // As ServingTargetText::Write: conditional on what was read, or none.
  if (version_.empty()) {
    return Status::FailedPrecondition(
        Describe() +
        ": read without a metadata.resourceVersion (a string), so a write "
        "could not be conditional; not written");
  }
  return Patch(text, version_);
}

Status ConfigMapKey::Put(const std::string& text) { return Patch(text, ""); }

Status ConfigMapKey::Patch(const std::string& text,
                           const std::string& version) {
  nlohmann::json patch = {{"data", {{key_, text}}}};
  if (!version.empty()) patch["metadata"]["resourceVersion"] = version;
  StatusOr<nlohmann::json> written = client_->Patch(Path(), patch);
  if (!written.ok()) return written.status().WithPrefix(Describe());
  version_ = StringField(*written, "metadata", "resourceVersion").value_or("");
  return Status::Ok();
}

}  // namespace migserve::kube
