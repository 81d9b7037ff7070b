#include "kube/testing/test_certificate.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "boundary/input_file.h"

namespace migserve::kube {

StatusOr<TestCertificate> MakeTestCertificate(const std::string& dir) {
  std::filesystem::create_directories(dir);
  TestCertificate c{dir + "/cert.pem", dir + "/key.pem", ""};
  std::string command = fmt::format(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost "
      "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout '{}' -out "
      "'{}' 2>/dev/null",
      c.key_file, c.cert_file);
  if (std::system(command.c_str()) != 0) {
    return Status::Unavailable("openssl could not make a test certificate");
  }
  MIGSERVE_ASSIGN_OR_RETURN(c.cert_pem, ReadFile(c.cert_file));
  return c;
}

}  // namespace migserve::kube
