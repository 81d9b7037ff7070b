// Kubernetes RBAC (rbac.authorization.k8s.io/v1) as the API server's
// authorizer applies it, for the stand-in API server: a request's user,
// verb, API group, resource, subresource, namespace and name against the
// Roles, ClusterRoles, RoleBindings and ClusterRoleBindings it holds.
// Allow rules only, as RBAC has; a RoleBinding grants in its own namespace,
// to a Role there or a ClusterRole; `resourceNames` restricts the verbs
// that name an object (never list, watch or create). Service accounts are
// the users system:serviceaccount:<namespace>:<name>, in the groups
// system:serviceaccounts, system:serviceaccounts:<namespace> and
// system:authenticated.
#ifndef MIGSERVE_KUBE_TESTING_RBAC_H_
#define MIGSERVE_KUBE_TESTING_RBAC_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace migserve::kube {

struct RbacRequest {
  std::string user;
  std::string verb;       // get list watch create update patch delete ...
  std::string api_group;  // "" for the core group
  std::string resource;   // e.g. pods
  std::string subresource;
  std::string namespace_;  // "" at the cluster scope
  std::string name;        // "" for a collection

  // "verb group/resource[/sub] in namespace", for audit lists.
  std::string ToString() const;
  auto operator<=>(const RbacRequest&) const = default;
};

// The user name of service account `name` in `namespace_`.
std::string ServiceAccountUser(const std::string& namespace_,
                               const std::string& name);

// The request that an HTTP `method` on `path` (with a `watch` query value)
// is; `user` as given. Paths that are not API paths give an empty resource.
RbacRequest RbacRequestOf(const std::string& user, const std::string& method,
                          const std::string& path, const std::string& watch);

// Whether the RBAC objects among `objects` (the store, by path) allow
// `request`.
bool RbacAllows(const std::map<std::string, nlohmann::json>& objects,
                const RbacRequest& request);

// The message of the 403 a real API server answers.
std::string ForbiddenMessage(const RbacRequest& request);

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_TESTING_RBAC_H_
