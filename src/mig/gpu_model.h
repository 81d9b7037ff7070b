// A MIG-capable GPU model: its slices and GPU-instance profiles. The tables
// live in data/gpus/*.yaml (DESIGN 2); this is their in-memory form.
#ifndef MIGSERVE_MIG_GPU_MODEL_H_
#define MIGSERVE_MIG_GPU_MODEL_H_

#include <string>
#include <string_view>
#include <vector>

#include "util/status_or.h"

namespace migserve::mig {

// A GPU-instance profile such as 3g.40gb.
struct Profile {
  std::string name;  // letters, digits, '.' and '+' (gpu_catalog.cc)
  std::vector<std::string> aliases;  // other spellings drivers print
  int nvml_id = -1;                  // informational: ids differ per GPU
  int compute_slices = 0;
  int memory_slices = 0;
  double memory_gb = 0;
  std::vector<int> starts;  // allowed starts, in memory-slice units
  int max_count = 0;        // at most this many per GPU; 0: no extra limit
  bool enabled_by_default = true;  // false for +me and double-memory 1g
  // Streaming multiprocessors the instance gets (nvidia-smi mig -lgip);
  // 0: not in the table. Not compute_slices x a constant: an A100's 7g has
  // 98 of its 108, an H100's 3g 60 and its 1g.20gb 26.
  int sms = 0;

  bool operator==(const Profile&) const = default;
};

// One product with this geometry, as NVML names it ("NVIDIA H100 80GB
// HBM3") with its PCI device id (0x2330; NVML's pciDeviceId holds it in the
// upper 16 bits, NVIDIA's vendor id 0x10DE in the lower).
struct Product {
  int pci_device_id = 0;
  std::string name;

  bool operator==(const Product&) const = default;
};

// The most profiles a GPU model may have: the optimizer keeps per-profile
// counts in fixed arrays. Every NVIDIA GPU so far has at most 8 (A100 and
// H100 with 4g.40gb+ variants included); the GPU table parser refuses more.
inline constexpr int kMaxProfiles = 8;
// The most compute or memory slices of a GPU: every NVIDIA GPU so far has
// at most 8, and layouts are enumerated over the memory slices.
inline constexpr int kMaxSlices = 16;

struct GpuModel {
  std::string name;
  std::vector<std::string> aliases;  // other names users give this model
  // Every product's PCI device id, and the products whose NVML name is known.
  std::vector<int> pci_device_ids;
  std::vector<Product> products;
  int compute_slices = 0;
  int memory_slices = 0;
  double memory_gb = 0;
  // True where drivers before R510 refused 4g together with 3g (A100).
  bool legacy_4g3g = false;
  // The whole GPU's memory bandwidth, GB/s, and dense BF16 tensor
  // throughput, TFLOPS, from its data sheet: what the LLM capacity model
  // (src/llm/) shares among slices. 0: not in the table.
  double memory_bandwidth_gbs = 0;
  double dense_bf16_tflops = 0;
  // Dense FP8 tensor throughput, TFLOPS (Hopper on); 0: the GPU has no FP8
  // tensor cores, and an FP8 model computes at BF16's rate (weights-only
  // FP8, as vLLM serves it on Ampere).
  double dense_fp8_tflops = 0;
  // Streaming multiprocessors of the whole GPU, the data sheet's
  // throughput is theirs; 0: not in the table.
  int sms = 0;
  std::vector<Profile> profiles;

  bool operator==(const GpuModel&) const = default;

  // Returns true if `name` is the model's name, one of its aliases or one
  // of its products' NVML names ("NVIDIA H100 80GB HBM3").
  bool Named(std::string_view name) const;

  // Returns true if `pci_device_id` is one of the model's products: either
  // the 16-bit device id or NVML's pciDeviceId (device id << 16 | 0x10DE).
  bool HasPciDeviceId(unsigned int pci_device_id) const;

  // Returns the index of the profile named `name` (or "MIG <name>", as
  // nvidia-smi prints it) or one of its aliases; else of the profile of the
  // same shape whose memory in the name is within 10% ("7g.79gb" is
  // 7g.80gb, "1g.11gb" 1g.10gb); -1 if there is none.
  int FindProfile(std::string_view name) const;

  // The canonical name of the profile FindProfile finds; NotFound "unknown
  // profile 'x' on <gpu> (known: ...)" listing every profile if none.
  StatusOr<std::string> CanonicalProfile(std::string_view name) const;

  // Returns the index of the enabled-by-default profile that takes the whole
  // GPU (all compute slices), or -1.
  int WholeProfile() const;

  // The share of the GPU's tensor throughput `profile` has: its SMs over
  // the GPU's where the table gives both, else its compute slices over the
  // GPU's.
  double ComputeShare(const Profile& profile) const;

  // Returns the index of the enabled-by-default profile with `compute`
  // compute slices and the fewest memory slices, or -1.
  int SmallestProfileWithCompute(int compute) const;
};

// Rules that depend on the driver or on the operator's choice.
struct MigOptions {
  // Apply the pre-R510 rule "no 4g with 3g" on GPUs whose table has it. The
  // paper's replication turns it on (18 A100 layouts instead of 19).
  bool legacy_4g3g = false;
  // Also use the profiles that are off by default (+me, double-memory 1g).
  bool optional_profiles = false;

  bool Enabled(const Profile& p) const {
    return p.enabled_by_default || optional_profiles;
  }
};

}  // namespace migserve::mig

#endif  // MIGSERVE_MIG_GPU_MODEL_H_
