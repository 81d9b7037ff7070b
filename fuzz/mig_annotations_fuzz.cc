// Any text as one of the agent's node annotations (layouts, a repartition
// request, a status): an error or a value, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kubernetes/partition/mig_annotations.h"
#include "mig/gpu_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace k8s = migserve::kubernetes;
  std::string text(reinterpret_cast<const char*>(data), size);
  static const migserve::mig::GpuModel& a100 =
      *migserve::mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  (void)k8s::ParseLayouts(text, "fuzz");
  (void)k8s::ParseRequest(text, a100, "fuzz");
  (void)k8s::ParseStatus(text, "fuzz");
  return 0;
}
