// Reading fields of JSON that comes from the cluster (objects anyone can
// write): each reader returns nullopt for a missing field or one of another
// type, and never throws.
#ifndef MIGSERVE_KUBE_JSON_READ_H_
#define MIGSERVE_KUBE_JSON_READ_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace migserve::kube {

// Returns the string `object[key]`, or nullopt.
std::optional<std::string> StringAt(const nlohmann::json& object,
                                    const char* key);

// Returns the string `object[map][key]`, or nullopt.
std::optional<std::string> StringField(const nlohmann::json& object,
                                       const char* map, const char* key);

// Returns `object[map][key]`, a string holding a whole decimal integer, as
// that integer, or nullopt.
std::optional<int> IntField(const nlohmann::json& object, const char* map,
                            const char* key);

// Returns true if `pod` is Ready (condition Ready is True) and not being
// deleted.
bool PodReady(const nlohmann::json& pod);

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_JSON_READ_H_
