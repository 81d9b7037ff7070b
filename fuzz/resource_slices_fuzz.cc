// Any text as the cluster's ResourceSlices (export --resource-slices and
// the DRA partition driver read them: `kubectl get resourceslices -o
// json`): GPUs or an error, never a crash; every UUID read is a plain name
// and no two GPUs share one.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "boundary/plain_name.h"
#include "kubernetes/partition/dra_slices.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json list = nlohmann::json::parse(text, nullptr, false);
  if (!list.is_object() || !list.contains("items") ||
      !list["items"].is_array()) {
    return 0;
  }
  auto gpus = migserve::kubernetes::GpusOfSlices(
      list["items"].get<std::vector<nlohmann::json>>(), "fuzz.json");
  if (!gpus.ok()) return 0;
  std::set<std::string> uuids;
  for (const auto& [at, gpu] : *gpus) {
    if (!migserve::IsPlainName(gpu.uuid) || !uuids.insert(gpu.uuid).second) {
      __builtin_trap();
    }
  }
  return 0;
}
