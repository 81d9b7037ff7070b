// A service's LLM replicas behind the proxy's balancers, on one simulated
// clock (docs/llm.md, "Through the proxy"): the service's requests (its
// lengths, arriving as its traffic gives the whole service) go to the
// balancers in turn. With affinity (the proxy's default), a balancer
// gives a request to its conversation's replica: the first, in an order
// each conversation draws by weight (a replica first with its share of
// the weights, as on nginx's consistent-hash ring), with fewer than its
// batch of the balancer's requests in flight; with every replica full,
// or without affinity, to the replica with the fewest of its requests in
// flight there per unit of weight (nginx's least_conn, the weights the
// replicas' credits; among equals, nginx's smooth weighted round robin).
// A request finds its prompt's cached share (BatcherArrival::cached) only
// on the replica that had its conversation's previous request.
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

// How the proxy balances a service's requests. Affinity applies, as at
// the proxy (kubernetes::ServingSpec::KeepsConversations), only where the
// terms count prefix-cache hits; elsewhere the fewest in flight.
enum class Balancing {
  kAffinity,          // `router --llm-balancing affinity`
  kLeastOutstanding,  // `router --llm-balancing least-conn`
};

// Runs `run.requests` requests of the service (`run.rate` its rate) over
// `replicas` behind `balancers` least-outstanding balancers. The samples
// are every counted request's (the first tenth a warm-up); the KV
// occupancy the replicas' mean. Deterministic for a seed.
BatcherSamples RunBalancedBatchers(const std::vector<BalancedReplica>& replicas,
                                   int balancers, Balancing balancing,
                                   const LlmTerms& terms,
                                   const queueing::Traffic& traffic,
                                   const BatcherRun& run);

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_BALANCED_BATCHERS_H_
