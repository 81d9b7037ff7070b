// A self-signed certificate for localhost and 127.0.0.1, made with the
// openssl command for tests that serve HTTPS.
#ifndef MIGSERVE_KUBE_TESTING_TEST_CERTIFICATE_H_
#define MIGSERVE_KUBE_TESTING_TEST_CERTIFICATE_H_

#include <string>

#include "util/status_or.h"

namespace migserve::kube {

struct TestCertificate {
  std::string cert_file;
  std::string key_file;
  std::string cert_pem;  // also the CA a client must trust
};

// Writes cert.pem and key.pem under `dir` (created if missing).
StatusOr<TestCertificate> MakeTestCertificate(const std::string& dir);

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_TESTING_TEST_CERTIFICATE_H_
