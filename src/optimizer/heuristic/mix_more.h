// The greedy's mix-more step (5.3, Appendix A): once a service is almost
// satisfied (GreedyOptions), configs that give it a share of a GPU and fill
// the rest with other services, each idle instance, the largest first, with
// the service it adds the most for, join the configs to pick from.
#ifndef MIGSERVE_OPTIMIZER_HEURISTIC_MIX_MORE_H_
#define MIGSERVE_OPTIMIZER_HEURISTIC_MIX_MORE_H_

#include <memory>
#include <vector>

#include "deployment/gpu_config.h"
#include "optimizer/heuristic/config_space.h"
#include "optimizer/options.h"

namespace migserve::optimizer {

// Searches the mix-more configs, over and over as the greedy's rates rise.
// Each search keeps, per service, a bound on the score of any config that
// mixes it, the largest of the bounds it pruned with; scores only fall as
// rates rise, so the bound holds at every later search, and a service whose
// bound cannot beat the score to beat is skipped without enumerating its
// shares. What a search returns is what one without the bounds would.
class FreshGains;

class MixMoreSearch {
 public:
  // `space` and `options` are not copied: they outlive the search.
  MixMoreSearch(const ConfigSpace& space, const GreedyOptions& options);
  ~MixMoreSearch();

  // Returns the best config that mixes an almost-satisfied service of
  // `services` with any others under `rates` (the first found among
  // equals, in the order of `services`, then of the layouts and shares) if
  // its score beats `*score` on entry, and sets `*score` to it; else an
  // empty layout, `*score` unchanged. The score to beat lets the search
  // skip what cannot matter to the caller. `rates` may only rise from one
  // call to the next.
  deployment::GpuConfig Best(const deployment::CompletionRates& rates,
                             const std::vector<int>& services, double* score);

 private:
  const ConfigSpace& space_;
  const GreedyOptions& options_;
  std::unique_ptr<FreshGains> fresh_;
  deployment::CompletionRates seen_;  // the rates fresh_ holds gains for
  std::vector<double> bound_;         // per service; infinite until searched
};

// One search, with no bounds kept: for callers whose rates may fall (MCTS).
deployment::GpuConfig BestMixMore(const ConfigSpace& space,
                                  const deployment::CompletionRates& rates,
                                  const GreedyOptions& options,
                                  const std::vector<int>& services,
                                  double* score);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_HEURISTIC_MIX_MORE_H_
