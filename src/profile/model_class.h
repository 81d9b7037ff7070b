// Paper 2.2: a model is linear, sub-linear or super-linear by how its
// throughput grows from its smallest instance to the whole GPU.
#ifndef MIGSERVE_PROFILE_MODEL_CLASS_H_
#define MIGSERVE_PROFILE_MODEL_CLASS_H_

#include <string>
#include <vector>

#include "mig/gpu_model.h"
#include "profile/profile_table.h"

namespace migserve::profile {

enum class Scaling { kSubLinear, kLinear, kSuperLinear };

// Returns "sub-linear", "linear" or "super-linear".
const char* ScalingName(Scaling s);

struct ModelClass {
  std::string model;
  int batch = 0;
  std::string smallest_profile;  // smallest instance that runs the model
  double ratio = 0;  // whole-GPU throughput / per-slice throughput there
  Scaling scaling = Scaling::kLinear;
};

// Thresholds of paper 2.2: a ratio in [6.5, 7.5] is linear on a 7-slice GPU.
// On a GPU with C compute slices they scale by C / 7.
constexpr double kLinearLow = 6.5;
constexpr double kLinearHigh = 7.5;

// Classifies every (model, batch) of `table` measured on `gpu` with one
// process, in model then batch order. A batch without a whole-GPU row, or
// without any smaller instance row, is left out.
std::vector<ModelClass> ClassifyModels(const ProfileTable& table,
                                       const mig::GpuModel& gpu);

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_MODEL_CLASS_H_
