// A replica's pod template as a serving spec gives it (docs/serving.md,
// "The serving spec"): the default one, an engine's, or a service's
// overrides, read field by field into the JSON of a Kubernetes container
// and pod: image, command, args, env (none of the replica contract's
// MIGSERVE_*), ports, probes, resources (none of nvidia.com/: the MIG
// device is migserve's to request), volumes and mounts, tolerations, pull
// secrets, service account, security context, and the node selector,
// labels and annotations (string maps that leave migserve's own keys
// alone).
#ifndef MIGSERVE_KUBERNETES_POD_TEMPLATE_H_
#define MIGSERVE_KUBERNETES_POD_TEMPLATE_H_

#include <nlohmann/json.hpp>

#include "boundary/yaml_map.h"
#include "util/status.h"

namespace migserve::kubernetes {

// Reads the template at `map` into `out` (fields it sets, others kept);
// InvalidArgument naming the file, line and field of what it refuses.
Status ReadPodTemplate(const YamlMap& map, nlohmann::ordered_json* out);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_POD_TEMPLATE_H_
