// The paper's baselines (section 7), static partitions that ignore MIG's
// reconfigurability:
//   whole   A100-7/7: every GPU one whole-GPU instance.
//   all-1g  A100-7x1/7: every GPU seven 1-slice instances, any service on
//           any instance (identical parallel machines).
//   mix     A100-MIX: every GPU 4-2-1, one service per GPU.
#ifndef MIGSERVE_OPTIMIZER_BASELINE_STATIC_PARTITION_H_
#define MIGSERVE_OPTIMIZER_BASELINE_STATIC_PARTITION_H_

#include "optimizer/optimizer.h"

namespace migserve::optimizer {

// One profile on every instance of every GPU, as many instances per GPU as
// fit; each service takes as many instances as it needs.
class HomogeneousOptimizer : public Optimizer {
 public:
  enum class Size { kWhole, kOneSlice };
  explicit HomogeneousOptimizer(Size size) : size_(size) {}

  const char* name() const override {
    return size_ == Size::kWhole ? "whole" : "all-1g";
  }
  Solution Solve(const Problem& problem,
                 const deployment::CompletionRates& initial,
                 const SolveOptions& options) override;

 private:
  Size size_;
};

// Every GPU 4g+2g+1g serving one service; the last GPU of a service leaves
// the instances it does not need idle.
class MixOptimizer : public Optimizer {
 public:
  const char* name() const override { return "mix"; }
  Solution Solve(const Problem& problem,
                 const deployment::CompletionRates& initial,
                 const SolveOptions& options) override;
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_BASELINE_STATIC_PARTITION_H_
