// ParvaGPU (Lee et al., SC'24, arXiv 2409.14447) reimplemented from its
// description, as a side-by-side peer (`--algo parvagpu`):
//  1. Optimal triplet decision: per service, the (instance size, batch, MPS
//     processes) whose throughput per GPC is highest among those whose
//     latency fits 0.45 x SLO (the workload's latency_budget and max_procs;
//     the capacity matrix holds the best triplet of each size).
//  2. Demand matching: floor(rate / optimal throughput) optimal segments
//     (one fewer on an exact multiple), then one last segment of the
//     smallest size whose best triplet covers what remains.
//  3. Segment allocation: segments by size, largest first, each on the
//     best-fitting GPU (fewest GPCs left that still fit; at most one 3g per
//     GPU) at ParvaGPU's preferred placements.
//  4. Optimization: from the last GPU back, each GPU using at most 4 GPCs
//     gives up its segments, which return as 2g and 1g segments (2g while a
//     2g serves more than two 1g) placed best-fit across all GPUs.
// Deviations, so every answer is a legal layout that serves every service:
// placements must keep the layout legal (ParvaGPU counts GPCs only and can
// put a 1g on the memory of a 3g), and a segment that cannot become 2g or
// 1g segments stays where it is (ParvaGPU drops it).
#ifndef MIGSERVE_OPTIMIZER_PARVAGPU_PARVAGPU_OPTIMIZER_H_
#define MIGSERVE_OPTIMIZER_PARVAGPU_PARVAGPU_OPTIMIZER_H_

#include "optimizer/optimizer.h"

namespace migserve::optimizer {

class ParvaGpuOptimizer : public Optimizer {
 public:
  const char* name() const override { return "parvagpu"; }
  Solution Solve(const Problem& problem,
                 const deployment::CompletionRates& initial,
                 const SolveOptions& options) override;
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_PARVAGPU_PARVAGPU_OPTIMIZER_H_
