// Any text as a kubeconfig, and as a credential plugin's ExecCredential:
// an error or a config, never a crash. The
// loader reads a file (certificate paths are relative to it), so each input
// is written to one scratch file first.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kube/exec_credential.h"
#include "kube/kube_config.h"
#include "util/file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      "/tmp/migserve-fuzz-kubeconfig-" + std::to_string(getpid()) + ".yaml";
  std::string text(reinterpret_cast<const char*>(data), size);
  if (!migserve::WriteFileAtomic(path, text).ok()) return 0;
  (void)migserve::kube::LoadKubeconfig(path);
  // What a credential plugin prints (the loader never runs one).
  (void)migserve::kube::ParseExecCredential(
      text, "client.authentication.k8s.io/v1", "fuzz");
  return 0;
}
