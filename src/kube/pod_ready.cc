#include "kube/json_read.h"

#include "util/csv.h"

namespace migserve::kube {

std::optional<std::string> StringAt(const nlohmann::json& object,
                                    const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<std::string> StringField(const nlohmann::json& object,
                                       const char* map, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto m = object.find(map);
  return m == object.end() ? std::nullopt : StringAt(*m, key);
}

std::optional<int> IntField(const nlohmann::json& object, const char* map,
                            const char* key) {
  std::optional<std::string> text = StringField(object, map, key);
  int value = 0;
  if (!text || !ParseInt(*text, &value)) return std::nullopt;
  return value;
}

bool PodReady(const nlohmann::json& pod) {
  auto meta = pod.find("metadata");
  if (meta == pod.end() || !meta->is_object() ||
      meta->contains("deletionTimestamp")) {
    return false;
  }
  auto status = pod.find("status");
  if (status == pod.end() || !status->is_object()) return false;
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return false;
  for (const auto& c : *conditions) {
    if (c.is_object() && c.value("type", nlohmann::json()) == "Ready" &&
        c.value("status", nlohmann::json()) == "True") {
      return true;
    }
  }
  return false;
}

}  // namespace migserve::kube
