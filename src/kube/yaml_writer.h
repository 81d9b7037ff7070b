// Writes JSON values as block YAML for Kubernetes and mig-parted: keys in
// insertion order, strings quoted whenever a YAML 1.1 reader would take them
// for something else ("0", "true", "null"), so label values stay strings.
#ifndef MIGSERVE_KUBE_YAML_WRITER_H_
#define MIGSERVE_KUBE_YAML_WRITER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace migserve::kube {

// Returns one YAML document per value, separated by "---" lines.
std::string ToYaml(const std::vector<nlohmann::ordered_json>& documents);

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_YAML_WRITER_H_
