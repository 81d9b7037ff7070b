#include "kube/serving_workload.h"

#include <fmt/format.h>

#include <utility>

#include "boundary/json_fields.h"
#include "kube/yaml_writer.h"

namespace migserve::kube {

std::string ServingWorkloadsPath(const std::string& namespace_) {
  return fmt::format(
      "/apis/migserve.io/v1alpha1/namespaces/{}/servingworkloads", namespace_);
}

std::string ServingWorkloadPath(const std::string& namespace_,
                                const std::string& name) {
  return ServingWorkloadsPath(namespace_) + "/" + name;
}

ServingWorkloadText::ServingWorkloadText(KubeClient* client,
                                         std::string namespace_,
                                         std::string name)
    : client_(client),
      namespace_name_(std::move(namespace_)),
      name_(std::move(name)) {}

std::string ServingWorkloadText::Describe() const {
  return "servingworkload " + Name();
}

std::string ServingWorkloadText::Name() const {
  return namespace_name_ + "/" + name_;
}

StatusOr<ServingWorkloadSpec> ServingWorkloadText::Read() {
  MIGSERVE_ASSIGN_OR_RETURN(
      nlohmann::json object,
      client_->Get(ServingWorkloadPath(namespace_name_, name_)));
  const nlohmann::json* spec = ObjectAt(object, "spec");
  if (spec == nullptr) {
    return Status::InvalidArgument(Describe() + ": no spec object");
  }
  const nlohmann::json* meta = ObjectAt(object, "metadata");
  long long generation = 0;
  if (meta != nullptr) {
    auto g = meta->find("generation");
    if (g != meta->end() && g->is_number_integer()) {
      generation = g->get<long long>();
    }
  }
  if (generation < 1) {
    return Status::InvalidArgument(
        Describe() + ": no metadata.generation (a positive integer)");
  }
  return ServingWorkloadSpec{ToYaml({nlohmann::ordered_json(*spec)}),
                             generation};
}

}  // namespace migserve::kube
