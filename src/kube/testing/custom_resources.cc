#include "kube/testing/custom_resources.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <iomanip>
#include <optional>
#include <set>
#include <sstream>

namespace migserve::kube {
namespace {

using Json = nlohmann::json;

constexpr char kDefinitions[] =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/";

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// The JSON type as the API server names it in messages.
std::string TypeName(const Json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "boolean";
  if (value.is_number_integer() || value.is_number_unsigned()) {
    return "integer";
  }
  if (value.is_number()) return "number";
  if (value.is_string()) return "string";
  if (value.is_array()) return "array";
  return "object";
}

bool HasType(const Json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    // A whole number written as 2.0 decodes as an integer.
    return value.is_number_integer() || value.is_number_unsigned() ||
           (value.is_number_float() &&
            value.get<double>() == static_cast<double>(static_cast<long long>(
                                       value.get<double>())));
  }
  return true;
}

class SchemaChecker {
 public:
  explicit SchemaChecker(SchemaFindings* findings) : out_(findings) {}

  void Check(const Json& schema, Json* value, const std::string& path) {
    if (value->is_null()) {
      if (schema.value("nullable", false) || !schema.contains("type")) return;
      return Error(fmt::format(
          "{}: Invalid value: \"null\": {} in body must be of type {}: "
          "\"null\"",
          path, path, schema["type"].get<std::string>()));
    }
    if (schema.contains("type")) {
      std::string type = schema["type"].get<std::string>();
      if (!HasType(*value, type)) {
        return Error(fmt::format(
            "{}: Invalid value: \"{}\": {} in body must be of type {}: "
            "\"{}\"",
            path, TypeName(*value), path, type, TypeName(*value)));
      }
    }
    if (schema.contains("enum") &&
        std::find(schema["enum"].begin(), schema["enum"].end(), *value) ==
            schema["enum"].end()) {
      std::vector<std::string> allowed;
      for (const Json& e : schema["enum"]) allowed.push_back(e.dump());
      Error(fmt::format("{}: Unsupported value: {}: supported values: {}", path,
                        value->dump(), fmt::join(allowed, ", ")));
    }
    if (value->is_number()) CheckBounds(schema, *value, path);
    if (value->is_string()) CheckLength(schema, *value, path);
    if (value->is_array()) CheckArray(schema, value, path);
    if (value->is_object()) CheckObject(schema, value, path);
  }

 private:
  void Error(std::string text) { out_->errors.push_back(std::move(text)); }

  void CheckBounds(const Json& schema, const Json& value,
                   const std::string& path) {
    double v = value.get<double>();
    if (schema.contains("minimum")) {
      double min = schema["minimum"].get<double>();
      bool exclusive = schema.value("exclusiveMinimum", false);
      if (v < min || (exclusive && v == min)) {
        Error(fmt::format(
            "{}: Invalid value: {}: {} in body should be greater than {}{}",
            path, value.dump(), path, exclusive ? "" : "or equal to ",
            schema["minimum"].dump()));
      }
    }
    if (schema.contains("maximum")) {
      double max = schema["maximum"].get<double>();
      bool exclusive = schema.value("exclusiveMaximum", false);
      if (v > max || (exclusive && v == max)) {
        Error(fmt::format(
            "{}: Invalid value: {}: {} in body should be less than {}{}", path,
            value.dump(), path, exclusive ? "" : "or equal to ",
            schema["maximum"].dump()));
      }
    }
  }

  void CheckLength(const Json& schema, const Json& value,
                   const std::string& path) {
    size_t length = value.get<std::string>().size();
    if (schema.contains("minLength") &&
        length < schema["minLength"].get<size_t>()) {
      Error(fmt::format(
          "{}: Invalid value: {}: {} in body should be at least {} chars long",
          path, value.dump(), path, schema["minLength"].get<size_t>()));
    }
    if (schema.contains("maxLength") &&
        length > schema["maxLength"].get<size_t>()) {
      Error(fmt::format("{}: Too long: may not be more than {} bytes", path,
                        schema["maxLength"].get<size_t>()));
    }
  }

  void CheckArray(const Json& schema, Json* value, const std::string& path) {
    if (schema.contains("maxItems") &&
        value->size() > schema["maxItems"].get<size_t>()) {
      return Error(fmt::format("{}: Too many: {}: must have at most {} items",
                               path, value->size(),
                               schema["maxItems"].get<size_t>()));
    }
    if (!schema.contains("items")) return;
    for (size_t i = 0; i < value->size(); ++i) {
      Check(schema["items"], &(*value)[i], fmt::format("{}[{}]", path, i));
    }
  }

  void CheckObject(const Json& schema, Json* value, const std::string& path) {
    const Json none = Json::object();
    const Json& properties =
        schema.contains("properties") ? schema["properties"] : none;
    if (schema.contains("required")) {
      for (const Json& key : schema["required"]) {
        if (!value->contains(key.get<std::string>())) {
          Error(Child(path, key.get<std::string>()) + ": Required value");
        }
      }
    }
    bool keep_unknown =
        schema.value("x-kubernetes-preserve-unknown-fields", false);
    std::vector<std::string> unknown;
    for (auto& [key, child] : value->items()) {
      std::string at = Child(path, key);
      if (path.empty() &&
          (key == "apiVersion" || key == "kind" || key == "metadata")) {
        continue;  // the API server's own
      }
      if (properties.contains(key)) {
        Check(properties[key], &child, at);
      } else if (schema.contains("additionalProperties") &&
                 schema["additionalProperties"].is_object()) {
        Check(schema["additionalProperties"], &child, at);
      } else if (!keep_unknown) {
        unknown.push_back(key);
        out_->unknown.push_back(at);
      }
    }
    for (const std::string& key : unknown) value->erase(key);
  }

  SchemaFindings* out_;
};

// "5s", "3m", "2h", "4d" since the RFC 3339 `stamp`; "<unknown>" if none.
std::string Age(const Json& stamp) {
  if (!stamp.is_string()) return "<unknown>";
  std::tm tm = {};
  std::istringstream in(stamp.get<std::string>());
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  if (in.fail()) return "<unknown>";
  auto then = std::chrono::system_clock::from_time_t(timegm(&tm));
  long s = std::max<long>(0, std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now() - then)
                                 .count());
  if (s < 120) return fmt::format("{}s", s);
  if (s < 7200) return fmt::format("{}m", s / 60);
  if (s < 172800) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

Json ResourceList(const std::string& group_version, const Json& resources) {
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group_version},
          {"resources", resources}};
}

const std::vector<std::string> kVerbs = {"create", "delete", "get",  "list",
                                         "patch",  "update", "watch"};

// A built-in kind the stand-in serves: what its users read and write, and
// what the install applies (kubectl maps each kind to its resource through
// discovery before it sends anything), with the top-level fields its Go
// type has beside apiVersion, kind and metadata (nullopt: not checked, as
// for events). Objects of every kind are stored alike; a built-in kind's
// nested fields are not checked.
struct BuiltinKind {
  const char* group;  // "" for the core group; every one at v1
  const char* plural;
  const char* kind;
  bool namespaced;
  std::optional<std::set<std::string>> fields;
};

const std::vector<BuiltinKind>& BuiltinKinds() {
  static const std::set<std::string> kSpecStatus = {"spec", "status"};
  static const std::vector<BuiltinKind> kAll = {
      {"", "pods", "Pod", true, kSpecStatus},
      {"", "configmaps", "ConfigMap", true,
       std::set<std::string>{"data", "binaryData", "immutable"}},
      {"", "services", "Service", true, kSpecStatus},
      {"", "serviceaccounts", "ServiceAccount", true,
       std::set<std::string>{"secrets", "imagePullSecrets",
                             "automountServiceAccountToken"}},
      {"", "persistentvolumeclaims", "PersistentVolumeClaim", true,
       kSpecStatus},
      {"", "events", "Event", true, std::nullopt},
      {"", "nodes", "Node", false, kSpecStatus},
      {"", "namespaces", "Namespace", false, kSpecStatus},
      {"apps", "deployments", "Deployment", true, kSpecStatus},
      {"apps", "daemonsets", "DaemonSet", true, kSpecStatus},
      {"policy", "poddisruptionbudgets", "PodDisruptionBudget", true,
       kSpecStatus},
      {"rbac.authorization.k8s.io", "roles", "Role", true,
       std::set<std::string>{"rules"}},
      {"rbac.authorization.k8s.io", "rolebindings", "RoleBinding", true,
       std::set<std::string>{"subjects", "roleRef"}},
      {"rbac.authorization.k8s.io", "clusterroles", "ClusterRole", false,
       std::set<std::string>{"rules", "aggregationRule"}},
      {"rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding",
       false, std::set<std::string>{"subjects", "roleRef"}},
      {"admissionregistration.k8s.io", "validatingadmissionpolicies",
       "ValidatingAdmissionPolicy", false, kSpecStatus},
      {"admissionregistration.k8s.io", "validatingadmissionpolicybindings",
       "ValidatingAdmissionPolicyBinding", false,
       std::set<std::string>{"spec"}},
      {"apiextensions.k8s.io", "customresourcedefinitions",
       "CustomResourceDefinition", false, kSpecStatus}};
  return kAll;
}

// The built-in kind at `ref`, or null.
const BuiltinKind* FindBuiltin(const ApiPath& ref) {
  if (ref.Version() != "v1") return nullptr;
  for (const BuiltinKind& k : BuiltinKinds()) {
    if (k.group == ref.Group() && k.plural == ref.resource) return &k;
  }
  return nullptr;
}

// The built-in resources as discovery lists them, by (group, version).
std::map<std::pair<std::string, std::string>, Json> BuiltinResources() {
  std::map<std::pair<std::string, std::string>, Json> out;
  for (const BuiltinKind& k : BuiltinKinds()) {
    out[{k.group, "v1"}].push_back({{"name", k.plural},
                                    {"singularName", ""},
                                    {"namespaced", k.namespaced},
                                    {"kind", k.kind},
                                    {"verbs", kVerbs}});
  }
  return out;
}

}  // namespace

namespace {

// The member `key` of `object`, or an empty object: no copy.
const Json& MemberOf(const Json& object, const char* key) {
  static const Json kNone = Json::object();
  auto it = object.find(key);
  return it == object.end() ? kNone : *it;
}

// Calls `visit` with the spec and the version of each served version of
// the CustomResourceDefinitions among `objects`, without copying them
// (a definition holds its whole schema); stops when `visit` returns false.
void ForEachServedVersion(
    const std::map<std::string, Json>& objects,
    const std::function<bool(const Json& spec, const Json& version)>& visit) {
  std::string prefix = kDefinitions;
  for (auto it = objects.lower_bound(prefix);
       it != objects.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const Json& spec = MemberOf(it->second, "spec");
    auto versions = spec.find("versions");
    if (versions == spec.end() || !versions->is_array()) continue;
    for (const Json& v : *versions) {
      if (v.value("served", false) && !visit(spec, v)) return;
    }
  }
}

CustomResource ResourceOf(const Json& spec, const Json& v) {
  const Json& names = MemberOf(spec, "names");
  CustomResource r;
  r.group = spec.value("group", "");
  r.version = v.value("name", "");
  r.plural = names.value("plural", "");
  r.singular = names.value("singular", "");
  r.kind = names.value("kind", "");
  r.short_names = names.value("shortNames", std::vector<std::string>{});
  r.namespaced = spec.value("scope", "Namespaced") == "Namespaced";
  r.status_subresource = MemberOf(v, "subresources").contains("status");
  r.schema = MemberOf(MemberOf(v, "schema"), "openAPIV3Schema");
  r.printer_columns = v.value("additionalPrinterColumns", Json::array());
  return r;
}

}  // namespace

std::vector<CustomResource> CustomResources(
    const std::map<std::string, Json>& objects) {
  std::vector<CustomResource> out;
  ForEachServedVersion(objects, [&](const Json& spec, const Json& v) {
    out.push_back(ResourceOf(spec, v));
    return true;
  });
  return out;
}

std::optional<CustomResource> FindCustomResource(
    const std::map<std::string, Json>& objects, const ApiPath& ref,
    bool* group_defined) {
  *group_defined = false;
  std::string group = ref.Group();
  if (group.empty()) return std::nullopt;
  std::string version = ref.prefix.substr(ref.prefix.rfind('/') + 1);
  // Every request to a group's resource asks: the schema is copied for
  // the one definition that serves it only.
  std::optional<CustomResource> found;
  ForEachServedVersion(objects, [&](const Json& spec, const Json& v) {
    if (spec.value("group", "") != group) return true;
    *group_defined = true;
    if (v.value("name", "") != version ||
        MemberOf(spec, "names").value("plural", "") != ref.resource) {
      return true;
    }
    found = ResourceOf(spec, v);
    return false;
  });
  return found;
}

SchemaFindings CheckSchema(const Json& schema, Json* object) {
  SchemaFindings findings;
  SchemaChecker(&findings).Check(schema, object, "");
  return findings;
}

std::vector<Json> JsonPathValues(const Json& object, const std::string& path) {
  std::vector<const Json*> at = {&object};
  size_t i = 0;
  while (i < path.size() && !at.empty()) {
    std::vector<const Json*> next;
    if (path[i] == '.') {
      size_t end = path.find_first_of(".[", i + 1);
      std::string key = path.substr(i + 1, end - i - 1);
      for (const Json* j : at) {
        if (j->is_object() && j->contains(key)) next.push_back(&(*j)[key]);
      }
      i = end == std::string::npos ? path.size() : end;
    } else if (path[i] == '[') {
      size_t end = path.find(']', i);
      if (end == std::string::npos) return {};
      std::string inside = path.substr(i + 1, end - i - 1);
      i = end + 1;
      for (const Json* j : at) {
        if (!j->is_array()) continue;
        if (inside.rfind("?(@.", 0) == 0) {
          // ?(@.key=="value")
          size_t eq = inside.find("==");
          if (eq == std::string::npos) return {};
          std::string key = inside.substr(4, eq - 4);
          std::string want = inside.substr(eq + 2);
          want = want.substr(0, want.rfind(')'));
          if (want.size() >= 2 && want.front() == '"') {
            want = want.substr(1, want.size() - 2);
          }
          for (const Json& e : *j) {
            if (e.is_object() && e.contains(key) && e[key].is_string() &&
                e[key].get<std::string>() == want) {
              next.push_back(&e);
            }
          }
        } else {
          size_t n = std::stoul(inside);
          if (n < j->size()) next.push_back(&(*j)[n]);
        }
      }
    } else {
      return {};
    }
    at = std::move(next);
  }
  std::vector<Json> values;
  for (const Json* j : at) values.push_back(*j);
  return values;
}

Json PrinterTable(const CustomResource& resource,
                  const std::vector<Json>& objects,
                  const std::string& resource_version) {
  Json columns =
      Json::array({{{"name", "Name"},
                    {"type", "string"},
                    {"format", "name"},
                    {"description", "Name must be unique within a namespace."},
                    {"priority", 0}}});
  for (const Json& c : resource.printer_columns) {
    columns.push_back({{"name", c.value("name", "")},
                       {"type", c.value("type", "string") == "date"
                                    ? "string"
                                    : c.value("type", "string")},
                       {"format", ""},
                       {"description", c.value("description", "")},
                       {"priority", c.value("priority", 0)}});
  }
  Json rows = Json::array();
  for (const Json& object : objects) {
    const Json& meta = object.value("metadata", Json::object());
    Json cells = Json::array({meta.value("name", "")});
    for (const Json& c : resource.printer_columns) {
      std::vector<Json> values =
          JsonPathValues(object, c.value("jsonPath", ""));
      if (c.value("type", "") == "date") {
        cells.push_back(values.empty() ? Json("<unknown>")
                                       : Json(Age(values[0])));
      } else if (values.empty()) {
        cells.push_back(nullptr);
      } else if (values.size() == 1) {
        cells.push_back(values[0]);
      } else {
        std::vector<std::string> texts;
        for (const Json& v : values) {
          texts.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        }
        cells.push_back(fmt::format("{}", fmt::join(texts, ",")));
      }
    }
    rows.push_back({{"cells", cells},
                    {"object",
                     {{"kind", "PartialObjectMetadata"},
                      {"apiVersion", "meta.k8s.io/v1"},
                      {"metadata", meta}}}});
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"columnDefinitions", columns},
          {"rows", rows}};
}

std::optional<Json> Discovery(const std::map<std::string, Json>& objects,
                              const std::string& path) {
  if (path == "/api") {
    return Json{
        {"kind", "APIVersions"},
        {"versions", {"v1"}},
        {"serverAddressByClientCIDRs",
         {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}}}};
  }
  const std::map<std::pair<std::string, std::string>, Json> builtin =
      BuiltinResources();
  if (path == "/api/v1") return ResourceList("v1", builtin.at({"", "v1"}));
  for (const auto& [gv, resources] : builtin) {
    if (!gv.first.empty() && path == "/apis/" + gv.first + "/" + gv.second) {
      return ResourceList(gv.first + "/" + gv.second, resources);
    }
  }
  std::vector<CustomResource> all = CustomResources(objects);
  if (path == "/apis") {
    std::map<std::string, std::set<std::string>> groups;
    for (const CustomResource& r : all) groups[r.group].insert(r.version);
    for (const auto& [gv, resources] : builtin) {
      if (!gv.first.empty()) groups[gv.first].insert(gv.second);
    }
    Json list = Json::array();
    for (const auto& [group, versions] : groups) {
      Json vs = Json::array();
      for (const std::string& v : versions) {
        vs.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
      }
      list.push_back(
          {{"name", group}, {"versions", vs}, {"preferredVersion", vs[0]}});
    }
    return Json{
        {"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", list}};
  }
  Json resources = Json::array();
  bool found = false;
  for (const CustomResource& r : all) {
    if (path != "/apis/" + r.group + "/" + r.version) continue;
    found = true;
    resources.push_back({{"name", r.plural},
                         {"singularName", r.singular},
                         {"namespaced", r.namespaced},
                         {"kind", r.kind},
                         {"verbs", kVerbs},
                         {"shortNames", r.short_names}});
    if (r.status_subresource) {
      resources.push_back({{"name", r.plural + "/status"},
                           {"singularName", ""},
                           {"namespaced", r.namespaced},
                           {"kind", r.kind},
                           {"verbs", {"get", "patch", "update"}}});
    }
  }
  if (!found) return std::nullopt;
  return ResourceList(path.substr(6), resources);
}

namespace {

// A group version's OpenAPI v3 document: per resource its item path and
// the PATCH operation on it.
Json GroupVersionSpec(const std::string& group, const std::string& version,
                      const Json& resources) {
  Json paths = Json::object();
  const std::string prefix =
      group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  for (const Json& r : resources) {
    const std::string plural = r["name"];
    if (plural.find('/') != std::string::npos) continue;  // a subresource
    Json parameters = Json::array();
    for (const char* name : {"dryRun", "fieldManager", "fieldValidation"}) {
      parameters.push_back({{"name", name},
                            {"in", "query"},
                            {"schema", {{"type", "string"}}},
                            {"uniqueItems", true}});
    }
    paths[prefix + (r["namespaced"] ? "/namespaces/{namespace}/" : "/") +
          plural + "/{name}"] = {
        {"patch",
         {{"operationId", "patch" + r["kind"].get<std::string>()},
          {"parameters", parameters},
          {"x-kubernetes-action", "patch"},
          {"x-kubernetes-group-version-kind",
           {{"group", group}, {"version", version}, {"kind", r["kind"]}}}}}};
  }
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "unversioned"}}},
          {"paths", paths}};
}

}  // namespace

std::vector<std::string> UnknownTopLevelFields(const ApiPath& ref,
                                               const Json& object) {
  std::vector<std::string> unknown;
  const BuiltinKind* kind = FindBuiltin(ref);
  if (kind == nullptr || !kind->fields || !object.is_object()) return unknown;
  for (const auto& [key, value] : object.items()) {
    if (key != "apiVersion" && key != "kind" && key != "metadata" &&
        kind->fields->count(key) == 0) {
      unknown.push_back(key);
    }
  }
  return unknown;
}

std::string KindAt(const std::map<std::string, Json>& objects,
                   const ApiPath& ref) {
  if (const BuiltinKind* kind = FindBuiltin(ref)) return kind->kind;
  for (const CustomResource& r : CustomResources(objects)) {
    if (r.group == ref.Group() && r.version == ref.Version() &&
        r.plural == ref.resource) {
      return r.kind;
    }
  }
  return "";
}

std::optional<Json> OpenApiV3(const std::map<std::string, Json>& objects,
                              const std::string& path) {
  constexpr std::string_view kRoot = "/openapi/v3";
  if (path.rfind(kRoot, 0) != 0) return std::nullopt;
  // (group, version) -> the resources discovery lists there.
  std::map<std::pair<std::string, std::string>, Json> versions =
      BuiltinResources();
  for (const CustomResource& r : CustomResources(objects)) {
    Json& list = versions[{r.group, r.version}];
    list.push_back(
        {{"name", r.plural}, {"namespaced", r.namespaced}, {"kind", r.kind}});
  }
  auto relative = [](const std::pair<std::string, std::string>& gv) {
    return gv.first.empty() ? "api/" + gv.second
                            : "apis/" + gv.first + "/" + gv.second;
  };
  if (path == kRoot) {
    Json index = Json::object();
    for (const auto& [gv, resources] : versions) {
      // The hash is what a client's cache keys on: the document's own.
      const std::string doc =
          GroupVersionSpec(gv.first, gv.second, resources).dump();
      index[relative(gv)] = {
          {"serverRelativeURL",
           fmt::format("{}/{}?hash={:016X}", kRoot, relative(gv),
                       std::hash<std::string>()(doc))}};
    }
    return Json{{"paths", index}};
  }
  for (const auto& [gv, resources] : versions) {
    if (path == std::string(kRoot) + "/" + relative(gv)) {
      return GroupVersionSpec(gv.first, gv.second, resources);
    }
  }
  return std::nullopt;
}

}  // namespace migserve::kube
