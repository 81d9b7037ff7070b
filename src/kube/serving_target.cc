#include "kube/serving_target.h"

#include <fmt/format.h>

#include <utility>

#include "boundary/json_fields.h"

namespace migserve::kube {

std::string ServingTargetsPath(const std::string& namespace_) {
  return fmt::format("/apis/migserve.io/v1alpha1/namespaces/{}/servingtargets",
                     namespace_);
}

std::string ServingTargetPath(const std::string& namespace_,
                              const std::string& name) {
  return ServingTargetsPath(namespace_) + "/" + name;
}

nlohmann::json ServingTargetObject(const std::string& namespace_,
                                   const std::string& name,
                                   nlohmann::json deployment) {
  return {{"apiVersion", kServingTargetApiVersion},
          {"kind", kServingTargetKind},
          {"metadata", {{"name", name}, {"namespace", namespace_}}},
          {"spec", std::move(deployment)}};
}

nlohmann::json MergePatchBetween(const nlohmann::json& from,
                                 const nlohmann::json& to) {
  if (!from.is_object() || !to.is_object()) return to;
  nlohmann::json patch = nlohmann::json::object();
  for (const auto& [key, value] : from.items()) {
    if (!to.contains(key)) patch[key] = nullptr;
  }
  for (const auto& [key, value] : to.items()) {
    if (!from.contains(key)) {
      patch[key] = value;
    } else if (from[key] != value) {
      patch[key] = MergePatchBetween(from[key], value);
    }
  }
  return patch;
}

ServingTargetText::ServingTargetText(KubeClient* client, std::string namespace_,
                                     std::string name,
                                     std::optional<LabelKey> annotation)
    : client_(client),
      namespace_name_(std::move(namespace_)),
      name_(std::move(name)),
      annotation_(annotation ? std::string(annotation->str()) : "") {}

std::string ServingTargetText::Describe() const {
  std::string what = fmt::format("servingtarget {}/{}", namespace_name_, name_);
  return annotation_.empty() ? what : what + " annotation " + annotation_;
}

StatusOr<std::string> ServingTargetText::Read() {
  MIGSERVE_ASSIGN_OR_RETURN(
      nlohmann::json object,
      client_->Get(ServingTargetPath(namespace_name_, name_)));
  version_ = StringField(object, "metadata", "resourceVersion").value_or("");
  if (annotation_.empty()) {
    const nlohmann::json* spec = ObjectAt(object, "spec");
    if (spec == nullptr)
      return Status::InvalidArgument(Describe() + ": missing");
    spec_ = *spec;
    return spec_.dump(2) + "\n";
  }
  const nlohmann::json* meta = ObjectAt(object, "metadata");
  const nlohmann::json* annotations =
      meta == nullptr ? nullptr : ObjectAt(*meta, "annotations");
  std::optional<std::string> text =
      annotations == nullptr ? std::nullopt
                             : StringAt(*annotations, annotation_.c_str());
  if (!text) return Status::InvalidArgument(Describe() + ": missing");
  return *text;
}

Status ServingTargetText::Write(const std::string& text) {
  return Patch(text, true);
}

Status ServingTargetText::Put(const std::string& text) {
  return Patch(text, false);
}

Status ServingTargetText::Patch(const std::string& text, bool checked) {
  nlohmann::json patch;
  nlohmann::json spec;
  if (annotation_.empty()) {
    spec = nlohmann::json::parse(text, nullptr, false);
    if (!spec.is_object()) {
      return Status::InvalidArgument(Describe() +
                                     ": the spec must be a JSON "
                                     "object");
    }
    patch["spec"] = MergePatchBetween(spec_, spec);
  } else {
    patch["metadata"]["annotations"][annotation_] = text;
  }
  if (checked) {
    // A write made on what was read, or none: an object read without a
    // resourceVersion (no API server sends one so) cannot be written
    // conditionally, and an unconditional write would undo another's.
    if (version_.empty()) {
      return Status::FailedPrecondition(
          Describe() +
          ": read without a metadata.resourceVersion (a string), so a write "
          "could not be conditional; not written");
    }
    patch["metadata"]["resourceVersion"] = version_;
  }
  StatusOr<nlohmann::json> written =
      client_->Patch(ServingTargetPath(namespace_name_, name_), patch);
  if (!written.ok()) return written.status().WithPrefix(Describe());
  version_ = StringField(*written, "metadata", "resourceVersion").value_or("");
  if (annotation_.empty()) spec_ = std::move(spec);
  return Status::Ok();
}

}  // namespace migserve::kube
