#include "kube/testing/api_path.h"

#include <sstream>
#include <vector>

namespace migserve::kube {

std::string ApiPath::Group() const {
  if (prefix.rfind("/apis/", 0) != 0) return "";
  std::string rest = prefix.substr(6);
  return rest.substr(0, rest.find('/'));
}

std::string ApiPath::Version() const {
  return prefix.substr(prefix.rfind('/') + 1);
}

std::string ApiPath::GroupVersion() const {
  const std::string group = Group();
  return group.empty() ? Version() : group + "/" + Version();
}

std::string ApiPath::ObjectPath() const {
  return prefix + (ns.empty() ? "" : "/namespaces/" + ns) + "/" + resource +
         "/" + name;
}

bool ApiPath::InCollection(const ApiPath& collection) const {
  return prefix == collection.prefix && resource == collection.resource &&
         (collection.ns.empty() || ns == collection.ns);
}

ApiPath ParseApiPath(const std::string& path) {
  std::vector<std::string> segs;
  std::stringstream in(path);
  for (std::string s; std::getline(in, s, '/');) {
    if (!s.empty()) segs.push_back(s);
  }
  ApiPath ref;
  size_t rest = 0;
  if (segs.size() >= 2 && segs[0] == "api") {
    ref.prefix = "/api/" + segs[1];
    rest = 2;
  } else if (segs.size() >= 3 && segs[0] == "apis") {
    ref.prefix = "/apis/" + segs[1] + "/" + segs[2];
    rest = 3;
  } else {
    return ref;
  }
  std::vector<std::string> r(segs.begin() + static_cast<long>(rest),
                             segs.end());
  if (r.size() >= 3 && r[0] == "namespaces") {
    ref.ns = r[1];
    r.erase(r.begin(), r.begin() + 2);
  }
  if (r.empty() || r.size() > 3) return ref;
  ref.resource = r[0];
  if (r.size() > 1) ref.name = r[1];
  if (r.size() > 2) ref.sub = r[2];
  ref.ok = true;
  return ref;
}

}  // namespace migserve::kube
