#include "kube/testing/strategic_merge_patch.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

namespace migserve::kube {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFrom = "$deleteFromPrimitiveList/";

// The merge key of list field `field` (its items as `items` show them), ""
// for a list replaced whole. From the Go types' patchMergeKey tags.
std::string MergeKey(const std::string& field, const Json& items) {
  if (field == "containers" || field == "initContainers" ||
      field == "ephemeralContainers" || field == "volumes" || field == "env" ||
      field == "imagePullSecrets" || field == "resourceClaims") {
    return "name";
  }
  if (field == "volumeMounts") return "mountPath";
  if (field == "volumeDevices") return "devicePath";
  if (field == "ownerReferences") return "uid";
  if (field == "conditions") return "type";
  if (field == "hostAliases") return "ip";
  if (field == "topologySpreadConstraints") return "topologyKey";
  if (field == "ports") {
    // A container's ports merge on containerPort, a Service's on port.
    for (const Json& item : items) {
      if (item.is_object() && item.contains("containerPort")) {
        return "containerPort";
      }
    }
    return "port";
  }
  return "";
}

// Whether list field `field` is a set of primitives merged by value.
bool PrimitiveSet(const std::string& field) { return field == "finalizers"; }

bool IsDirective(const std::string& key) {
  return !key.empty() && key[0] == '$';
}

// `value` without the directives a patch carries, for a part of the patch
// that the original does not have.
Json Plain(const Json& value) {
  if (value.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : value.items()) {
      if (!IsDirective(k)) out[k] = Plain(v);
    }
    return out;
  }
  if (value.is_array()) {
    Json out = Json::array();
    for (const Json& v : value) {
      if (!(v.is_object() && v.value("$patch", "") == "delete")) {
        out.push_back(Plain(v));
      }
    }
    return out;
  }
  return value;
}

StatusOr<Json> MergeMap(Json original, const Json& patch);

// List field `field` of `original` merged with `patch`'s items.
StatusOr<Json> MergeList(const std::string& field, Json original,
                         const Json& patch) {
  if (!original.is_array()) return Plain(patch);
  if (PrimitiveSet(field)) {
    for (const Json& v : patch) {
      if (std::find(original.begin(), original.end(), v) == original.end()) {
        original.push_back(v);
      }
    }
    return original;
  }
  const std::string key = MergeKey(field, original.empty() ? patch : original);
  if (key.empty()) return Plain(patch);
  for (const Json& item : patch) {
    if (!item.is_object() || !item.contains(key)) {
      return Status::InvalidArgument(fmt::format(
          "{}: an item without its merge key {}: {}", field, key, item.dump()));
    }
    auto same =
        std::find_if(original.begin(), original.end(), [&](const Json& o) {
          return o.is_object() && o.contains(key) && o[key] == item[key];
        });
    const std::string directive = item.value("$patch", "");
    if (directive == "delete") {
      if (same != original.end()) original.erase(same);
    } else if (directive == "replace") {
      if (same != original.end())
        *same = Plain(item);
      else
        original.push_back(Plain(item));
    } else if (same != original.end()) {
      MIGSERVE_ASSIGN_OR_RETURN(*same, MergeMap(*same, item));
    } else {
      original.push_back(Plain(item));
    }
  }
  return original;
}

// `list` in the order `order` gives (items matched by `key`, or by value),
// the items it does not name after them, as they were.
Json Ordered(const Json& list, const Json& order, const std::string& key) {
  Json out = Json::array();
  std::vector<bool> taken(list.size(), false);
  for (const Json& want : order) {
    for (size_t i = 0; i < list.size(); ++i) {
      bool same = key.empty() ? list[i] == want
                              : list[i].is_object() && want.is_object() &&
                                    list[i].value(key, Json()) ==
                                        want.value(key, Json());
      if (!taken[i] && same) {
        out.push_back(list[i]);
        taken[i] = true;
        break;
      }
    }
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!taken[i]) out.push_back(list[i]);
  }
  return out;
}

StatusOr<Json> MergeMap(Json original, const Json& patch) {
  if (!patch.is_object()) {
    return Status::InvalidArgument("a patch of a map that is not an object");
  }
  const std::string directive = patch.value("$patch", "");
  if (directive == "replace") return Plain(patch);
  if (!original.is_object()) original = Json::object();
  for (const auto& [key, value] : patch.items()) {
    if (IsDirective(key)) continue;
    if (value.is_null()) {
      original.erase(key);
    } else if (value.is_object()) {
      if (value.value("$patch", "") == "delete") {
        original.erase(key);
        continue;
      }
      auto at = original.find(key);
      MIGSERVE_ASSIGN_OR_RETURN(
          original[key], at != original.end() ? MergeMap(*at, value)
                                              : StatusOr<Json>(Plain(value)));
    } else if (value.is_array()) {
      auto at = original.find(key);
      MIGSERVE_ASSIGN_OR_RETURN(
          original[key],
          MergeList(key, at != original.end() ? *at : Json(), value));
    } else {
      original[key] = value;
    }
  }
  for (const auto& [key, value] : patch.items()) {
    const std::string field =
        key.rfind(kOrder, 0) == 0 ? key.substr(kOrder.size()) : "";
    const std::string removed =
        key.rfind(kDeleteFrom, 0) == 0 ? key.substr(kDeleteFrom.size()) : "";
    if (!field.empty() && original.contains(field) &&
        original[field].is_array()) {
      if (!value.is_array()) {
        return Status::InvalidArgument(key + ": not a list");
      }
      original[field] =
          Ordered(original[field], value, MergeKey(field, original[field]));
    } else if (!removed.empty() && original.contains(removed)) {
      if (!value.is_array()) {
        return Status::InvalidArgument(key + ": not a list");
      }
      Json& list = original[removed];
      for (const Json& v : value) {
        list.erase(std::remove(list.begin(), list.end(), v), list.end());
      }
    } else if (key == "$retainKeys") {
      if (!value.is_array()) {
        return Status::InvalidArgument("$retainKeys: not a list");
      }
      for (auto it = original.begin(); it != original.end();) {
        if (std::find(value.begin(), value.end(), it.key()) == value.end()) {
          it = original.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  return original;
}

}  // namespace

StatusOr<Json> StrategicMergePatch(const Json& original, const Json& patch) {
  return MergeMap(original, patch);
}

}  // namespace migserve::kube
