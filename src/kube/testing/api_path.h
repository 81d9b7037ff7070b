// An API server path as the stand-in reads it: /api/v1[/namespaces/NS]/
// RESOURCE[/NAME[/SUB]] or /apis/GROUP/VERSION[...]. Shared by the store
// (api_server_standin.h) and RBAC (rbac.h), so both read a path alike.
#ifndef MIGSERVE_KUBE_TESTING_API_PATH_H_
#define MIGSERVE_KUBE_TESTING_API_PATH_H_

#include <string>

namespace migserve::kube {

struct ApiPath {
  bool ok = false;     // a resource path
  std::string prefix;  // /api/v1 or /apis/GROUP/VERSION
  std::string ns, resource, name, sub;

  // The API group: "" for /api/v1.
  std::string Group() const;
  // The API version: "v1" for /api/v1 and /apis/apps/v1.
  std::string Version() const;
  // What an object's apiVersion says: "v1", "apps/v1".
  std::string GroupVersion() const;
  std::string ObjectPath() const;
  bool InCollection(const ApiPath& collection) const;
};

ApiPath ParseApiPath(const std::string& path);

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_TESTING_API_PATH_H_
