// A service's LLM replicas behind the proxy's balancers, on one simulated
// clock (docs/llm.md, "Through the proxy"): the service's requests (its
// lengths, arriving as its traffic gives the whole service) go to the
// balancers in turn, and a balancer gives each to the replica with the
// fewest of its requests in flight there per unit of weight (nginx's
// least_conn, the weights the replicas' credits; among equals, nginx's
// smooth weighted round robin).
// Each replica is a continuous batcher (continuous_batcher.h) of its
// slice. With one replica it is RunBatcher.
#ifndef MIGSERVE_LLM_BALANCED_BATCHERS_H_
#define MIGSERVE_LLM_BALANCED_BATCHERS_H_

#include <vector>

#include "llm/batcher_simulation.h"
#include "llm/llm_terms.h"
#include "llm/slice_model.h"
#include "queueing/traffic.h"

namespace migserve::llm {

struct BalancedReplica {
  SliceCapacity slice;
  double weight = 1;  // its credit
};

// Runs `run.requests` requests of the service (`run.rate` its rate) over
// `replicas` behind `balancers` least-outstanding balancers. The samples
// are every counted request's (the first tenth a warm-up); the KV
// occupancy the replicas' mean. Deterministic for a seed.
BatcherSamples RunBalancedBatchers(const std::vector<BalancedReplica>& replicas,
                                   int balancers, const LlmTerms& terms,
                                   const queueing::Traffic& traffic,
                                   const BatcherRun& run);

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_BALANCED_BATCHERS_H_
