#include "kube/testing/real_kubectl.h"

#include <cstdio>
#include <regex>

namespace migserve::kube {

std::string KubectlUnusable() {
  FILE* pipe = popen("kubectl version --client 2>/dev/null", "r");
  if (pipe == nullptr) return "cannot run kubectl";
  std::string out;
  char buffer[512];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    out.append(buffer, n);
  }
  pclose(pipe);
  std::smatch m;
  if (!std::regex_search(out, m,
                         std::regex("Client Version: v([0-9]+)\\.([0-9]+)"))) {
    return "no kubectl on PATH";
  }
  const int major = std::stoi(m[1]), minor = std::stoi(m[2]);
  if (major > 1 || minor >= 27) return "";
  return "kubectl " + m[1].str() + "." + m[2].str() +
         " is older than 1.27 (no Kustomize v5, no OpenAPI v3 field "
         "validation)";
}

}  // namespace migserve::kube
