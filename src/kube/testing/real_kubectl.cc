#include "kube/testing/real_kubectl.h"

#include <regex>

#include "util/test_util.h"

namespace migserve::kube {

std::string KubectlUnusable() {
  const std::string out = testing::RunShell("kubectl version --client").second;
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
