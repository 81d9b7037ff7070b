// A YAML value as JSON, the inverse of yaml_writer.h: what Kubernetes
// manifests and migserve's YAML inputs mean as API objects.
#ifndef MIGSERVE_KUBE_YAML_JSON_H_
#define MIGSERVE_KUBE_YAML_JSON_H_

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

namespace migserve::kube {

// Mappings become objects (in their order), sequences arrays; plain
// scalars that read as booleans, integers or numbers become those (as in
// YAML's core schema), `null` and `~` null; quoted scalars stay strings.
nlohmann::ordered_json YamlToJson(const YAML::Node& node);

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_YAML_JSON_H_
