#include "kubernetes/pod_template.h"

#include <fmt/format.h>

#include <string>

#include "kube/yaml_json.h"
#include "kubernetes/names.h"

namespace migserve::kubernetes {
namespace {

using OrderedJson = nlohmann::ordered_json;

bool Reserved(const std::string& key) {
  return key.rfind("migserve.io/", 0) == 0 || key == kManagedBy;
}

// Reads the list under `key`: each item a mapping with every field of
// `required` a string, or (if `required` is empty) anything.
Status ReadList(const YamlMap& map, const char* key,
                const std::vector<const char*>& required, OrderedJson* out) {
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> items,
                            map.Sequence(key, false));
  OrderedJson list = OrderedJson::array();
  for (size_t i = 0; i < items.size(); ++i) {
    std::string path = fmt::format("{}[{}]", map.FieldPath(key), i);
    MIGSERVE_ASSIGN_OR_RETURN(YamlMap item,
                              YamlMap::Open(items[i], map.source(), path));
    for (const char* field : required) {
      std::string value;
      MIGSERVE_RETURN_IF_ERROR(item.Required(field, &value));
      if (value.empty()) return item.Error(field, "must not be empty");
    }
    list.push_back(kube::YamlToJson(items[i]));
  }
  (*out)[key] = std::move(list);
  return Status::Ok();
}

// Reads the mapping under `key` as JSON.
Status ReadObject(const YamlMap& map, const char* key, OrderedJson* out) {
  MIGSERVE_RETURN_IF_ERROR(
      YamlMap::Open(map.Value(key), map.source(), map.FieldPath(key)).status());
  (*out)[key] = kube::YamlToJson(map.Value(key));
  return Status::Ok();
}

// Reads a mapping of strings to strings (labels, annotations, a node
// selector); `check` says what is wrong with an entry, or "".
Status ReadStrings(const YamlMap& map, const char* key,
                   const std::function<std::string(const std::string&,
                                                   const std::string&)>& check,
                   OrderedJson* out) {
  MIGSERVE_ASSIGN_OR_RETURN(
      YamlMap value,
      YamlMap::Open(map.Value(key), map.source(), map.FieldPath(key)));
  OrderedJson strings = OrderedJson::object();
  for (const auto& entry : map.Value(key)) {
    std::string name = entry.first.as<std::string>("");
    if (!entry.second.IsScalar()) {
      return value.Error(name, "expected a string");
    }
    std::string why = check(name, entry.second.Scalar());
    if (!why.empty()) return value.Error(name, why);
    strings[name] = entry.second.Scalar();
  }
  (*out)[key] = std::move(strings);
  return Status::Ok();
}

// Reads a pod template (the default one or a service's overrides) from
// `map` into `out`, field by field.
// The template's env: no variable of the replica contract (MIGSERVE_*).
Status ReadEnv(const YamlMap& map, OrderedJson* out) {
  MIGSERVE_RETURN_IF_ERROR(ReadList(map, "env", {"name"}, out));
  for (size_t i = 0; i < (*out)["env"].size(); ++i) {
    std::string name = (*out)["env"][i]["name"];
    if (name.rfind("MIGSERVE_", 0) == 0) {
      return map.Error("env", fmt::format("env[{}]: {} is set by migserve "
                                          "(the replica contract)",
                                          i, name));
    }
  }
  return Status::Ok();
}

// The template's ports: at least one, each a containerPort of 1 to 65535.
Status ReadPorts(const YamlMap& map, OrderedJson* out) {
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> ports,
                            map.Sequence("ports", true));
  if (ports.empty()) return map.Error("ports", "needs at least one port");
  for (size_t i = 0; i < ports.size(); ++i) {
    MIGSERVE_ASSIGN_OR_RETURN(
        YamlMap port,
        YamlMap::Open(ports[i], map.source(),
                      fmt::format("{}[{}]", map.FieldPath("ports"), i)));
    int number = 0;
    MIGSERVE_RETURN_IF_ERROR(port.Required("containerPort", &number));
    if (number < 1 || number > 65535) {
      return port.Error("containerPort", "must be 1 to 65535");
    }
  }
  return ReadList(map, "ports", {}, out);
}

// The template's resources: limits and requests, none of nvidia.com/ (the
// replica's MIG device is migserve's to request).
Status CheckResources(const YamlMap& map, const OrderedJson& template_json) {
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap resources,
                            YamlMap::Open(map.Value("resources"), map.source(),
                                          map.FieldPath("resources")));
  MIGSERVE_RETURN_IF_ERROR(resources.CheckKeys({"limits", "requests"}));
  auto declared = template_json.find("resources");
  if (declared == template_json.end() || !declared->is_object()) {
    return Status::Ok();
  }
  for (const char* side : {"limits", "requests"}) {
    auto amounts = declared->find(side);
    if (amounts == declared->end() || !amounts->is_object()) continue;
    for (const auto& [name, value] : amounts->items()) {
      if (name.rfind("nvidia.com/", 0) == 0) {
        return resources.Error(
            side, name +
                      ": migserve requests the replica's MIG device "
                      "itself; leave nvidia.com/ resources out");
      }
    }
  }
  return Status::Ok();
}

// The template's labels, annotations and node selector: string maps that
// leave migserve's own keys alone.
Status ReadStringMaps(const YamlMap& map, OrderedJson* out) {
  auto label = [](const std::string& key, const std::string& value) {
    if (Reserved(key)) return key + " is set by migserve";
    Status ok = CheckLabelValue(value, "value");
    return ok.ok() ? std::string() : ok.message();
  };
  auto annotation = [](const std::string& key, const std::string&) {
    return Reserved(key) ? key + " is set by migserve" : std::string();
  };
  auto selector = [](const std::string& key, const std::string&) {
    return key == "kubernetes.io/hostname"
               ? std::string("migserve pins each replica to its node itself")
               : std::string();
  };
  using Check = std::string (*)(const std::string&, const std::string&);
  for (auto [key, check] : {std::pair<const char*, Check>{"labels", +label},
                            {"annotations", +annotation},
                            {"nodeSelector", +selector}}) {
    if (map.Value(key).IsDefined()) {
      MIGSERVE_RETURN_IF_ERROR(ReadStrings(map, key, check, out));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ReadPodTemplate(const YamlMap& map, nlohmann::ordered_json* out) {
  MIGSERVE_RETURN_IF_ERROR(
      map.CheckKeys({"image", "imagePullPolicy", "command", "args", "env",
                     "ports", "readinessProbe", "livenessProbe", "startupProbe",
                     "resources", "volumeMounts", "volumes", "tolerations",
                     "imagePullSecrets", "serviceAccountName", "nodeSelector",
                     "labels", "annotations", "securityContext"}));
  for (const char* key : {"image", "imagePullPolicy", "serviceAccountName"}) {
    if (!map.Value(key).IsDefined()) continue;
    std::string value;
    MIGSERVE_RETURN_IF_ERROR(map.Required(key, &value));
    if (value.empty()) return map.Error(key, "must not be empty");
    if (std::string problem = WordProblem(value); !problem.empty()) {
      return map.Error(key, problem);
    }
    (*out)[key] = value;
  }
  for (const char* key : {"command", "args"}) {
    if (!map.Value(key).IsDefined()) continue;
    std::vector<std::string> words;
    MIGSERVE_RETURN_IF_ERROR(map.Optional(key, &words));
    // vLLM's --served-model-name=X serves X alone, while the proxy routes
    // a service's model and the model's aliases to it too: each of those
    // requests would get vLLM's 404.
    for (const std::string& word : words) {
      if (word.rfind("--served-model-name=", 0) == 0) {
        return map.Error(
            key, fmt::format("'{}' serves one name, but the proxy routes the "
                             "service's name, its model and the model's "
                             "aliases to it: write --served-model-name and "
                             "$(MIGSERVE_SERVED_MODEL_NAMES) as two words",
                             Printable(word)));
      }
    }
    (*out)[key] = words;
  }
  if (map.Value("env").IsDefined()) {
    MIGSERVE_RETURN_IF_ERROR(ReadEnv(map, out));
  }
  if (map.Value("ports").IsDefined()) {
    MIGSERVE_RETURN_IF_ERROR(ReadPorts(map, out));
  }
  for (const char* key : {"readinessProbe", "livenessProbe", "startupProbe",
                          "resources", "securityContext"}) {
    if (map.Value(key).IsDefined()) {
      MIGSERVE_RETURN_IF_ERROR(ReadObject(map, key, out));
    }
  }
  if (map.Value("resources").IsDefined()) {
    MIGSERVE_RETURN_IF_ERROR(CheckResources(map, *out));
  }
  const std::pair<const char*, std::vector<const char*>> lists[] = {
      {"volumeMounts", {"name", "mountPath"}},
      {"volumes", {"name"}},
      {"imagePullSecrets", {"name"}},
      {"tolerations", {}}};
  for (const auto& [key, required] : lists) {
    if (map.Value(key).IsDefined()) {
      MIGSERVE_RETURN_IF_ERROR(ReadList(map, key, required, out));
    }
  }
  return ReadStringMaps(map, out);
}

}  // namespace migserve::kubernetes
