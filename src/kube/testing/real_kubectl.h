// Whether the tests that run the real kubectl against the stand-in can:
// a kubectl on PATH of 1.27 or later (Kustomize v5 for the install's
// renders, OpenAPI v3 and server-side field validation for `apply`, the
// stand-in's way; Debian 12's own kubernetes-client is 1.20).
#ifndef MIGSERVE_KUBE_TESTING_REAL_KUBECTL_H_
#define MIGSERVE_KUBE_TESTING_REAL_KUBECTL_H_

#include <string>

namespace migserve::kube {

// "" where such a kubectl runs; else why not, for a test's skip.
std::string KubectlUnusable();

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_TESTING_REAL_KUBECTL_H_
