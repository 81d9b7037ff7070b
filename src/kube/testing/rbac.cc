#include "kube/testing/rbac.h"

#include <fmt/format.h>

#include <vector>

#include "kube/testing/api_path.h"

namespace migserve::kube {
namespace {

using json = nlohmann::json;

constexpr char kRbacPrefix[] = "/apis/rbac.authorization.k8s.io/v1/";

bool Lists(const json& rule, const char* key, const std::string& value) {
  if (!rule.contains(key) || !rule[key].is_array()) return false;
  for (const json& v : rule[key]) {
    if (v.is_string() && (v == "*" || v == value)) return true;
  }
  return false;
}

bool RuleAllows(const json& rule, const RbacRequest& r) {
  std::string resource =
      r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
  if (!Lists(rule, "verbs", r.verb) || !Lists(rule, "apiGroups", r.api_group) ||
      !Lists(rule, "resources", resource)) {
    return false;
  }
  if (!rule.contains("resourceNames") || rule["resourceNames"].empty()) {
    return true;
  }
  return !r.name.empty() && Lists(rule, "resourceNames", r.name);
}

bool SubjectIs(const json& subject, const RbacRequest& r) {
  std::string kind = subject.value("kind", "");
  std::string name = subject.value("name", "");
  if (kind == "ServiceAccount") {
    return r.user == ServiceAccountUser(subject.value("namespace", ""), name);
  }
  if (kind == "User") return r.user == name;
  if (kind == "Group") {
    std::string prefix = "system:serviceaccount:";
    if (r.user.rfind(prefix, 0) != 0) return name == "system:authenticated";
    std::string ns = r.user.substr(prefix.size());
    ns = ns.substr(0, ns.find(':'));
    return name == "system:authenticated" || name == "system:serviceaccounts" ||
           name == "system:serviceaccounts:" + ns;
  }
  return false;
}

// Whether the role `ref` names (from a binding in `binding_ns`, "" for a
// ClusterRoleBinding) allows `r`.
bool RoleAllows(const std::map<std::string, json>& objects, const json& ref,
                const std::string& binding_ns, const RbacRequest& r) {
  std::string kind = ref.value("kind", "");
  std::string path;
  if (kind == "ClusterRole") {
    path = kRbacPrefix + std::string("clusterroles/") + ref.value("name", "");
  } else if (kind == "Role" && !binding_ns.empty()) {
    path = fmt::format("{}namespaces/{}/roles/{}", kRbacPrefix, binding_ns,
                       ref.value("name", ""));
  } else {
    return false;
  }
  auto role = objects.find(path);
  if (role == objects.end() || !role->second.contains("rules")) return false;
  for (const json& rule : role->second["rules"]) {
    if (RuleAllows(rule, r)) return true;
  }
  return false;
}

}  // namespace

std::string RbacRequest::ToString() const {
  std::string out =
      fmt::format("{} {}{}{}", verb, api_group.empty() ? "" : api_group + "/",
                  resource, subresource.empty() ? "" : "/" + subresource);
  if (!namespace_.empty()) out += " in " + namespace_;
  return out;
}

std::string ServiceAccountUser(const std::string& namespace_,
                               const std::string& name) {
  return fmt::format("system:serviceaccount:{}:{}", namespace_, name);
}

RbacRequest RbacRequestOf(const std::string& user, const std::string& method,
                          const std::string& path, const std::string& watch) {
  RbacRequest r;
  r.user = user;
  ApiPath p = ParseApiPath(path);
  if (!p.ok) return r;
  r.api_group = p.Group();
  r.namespace_ = p.ns;
  r.resource = p.resource;
  r.name = p.name;
  r.subresource = p.sub;
  bool collection = r.name.empty();
  if (method == "GET") {
    r.verb = collection ? (watch == "true" || watch == "1" ? "watch" : "list")
                        : "get";
  } else if (method == "POST") {
    r.verb = "create";
  } else if (method == "PUT") {
    r.verb = "update";
  } else if (method == "PATCH") {
    r.verb = "patch";
  } else if (method == "DELETE") {
    r.verb = collection ? "deletecollection" : "delete";
  }
  return r;
}

bool RbacAllows(const std::map<std::string, json>& objects,
                const RbacRequest& r) {
  for (const auto& [path, binding] : objects) {
    if (path.rfind(kRbacPrefix, 0) != 0) continue;
    std::string rest = path.substr(sizeof(kRbacPrefix) - 1);
    std::string binding_ns;
    if (rest.rfind("clusterrolebindings/", 0) == 0) {
      binding_ns = "";
    } else if (rest.rfind("namespaces/", 0) == 0 &&
               rest.find("/rolebindings/") != std::string::npos) {
      binding_ns = binding["metadata"].value("namespace", "");
      // A RoleBinding grants in its namespace only.
      if (binding_ns.empty() || binding_ns != r.namespace_) continue;
    } else {
      continue;
    }
    bool bound = false;
    for (const json& subject : binding.value("subjects", json::array())) {
      bound = bound || SubjectIs(subject, r);
    }
    if (bound && RoleAllows(objects, binding.value("roleRef", json::object()),
                            binding_ns, r)) {
      return true;
    }
  }
  return false;
}

std::string ForbiddenMessage(const RbacRequest& r) {
  std::string resource =
      r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
  std::string what =
      r.name.empty() ? resource : fmt::format("{} \"{}\"", resource, r.name);
  return fmt::format(
      "{} is forbidden: User \"{}\" cannot {} resource \"{}\" in API group "
      "\"{}\" {}",
      what, r.user, r.verb, resource, r.api_group,
      r.namespace_.empty()
          ? std::string("at the cluster scope")
          : fmt::format("in the namespace \"{}\"", r.namespace_));
}

}  // namespace migserve::kube
