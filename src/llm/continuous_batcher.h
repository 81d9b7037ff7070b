// One replica's continuous batcher (vLLM V1-like) at token level, step by
// step (docs/llm.md): requests wait in the order they were added and join
// the running batch at the next step while it has fewer than max_batch
// sequences, the KV cache room for the whole request (prompt and output:
// no preemption) and tokens left in the step's budget (max_batched_tokens:
// chunked prefill). Each step gives the running sequences their next token
// or their prompt's next chunk first, then the joining ones their first
// chunk; a prompt's last chunk gives its first token. A step takes
// SliceCapacity::StepMs of what it computed. A sequence leaves once it has
// its output and frees its room.
//
// The batcher simulation (batcher_simulation.h) drives it on simulated
// time; an emulated replica in tests drives it on the wall clock.
#ifndef MIGSERVE_LLM_CONTINUOUS_BATCHER_H_
#define MIGSERVE_LLM_CONTINUOUS_BATCHER_H_

#include <cstddef>
#include <deque>
#include <vector>

#include "llm/slice_model.h"

namespace migserve::llm {

struct BatcherRequest {
  long prompt = 1;  // tokens
  long output = 1;  // tokens to make
  long cached = 0;  // prompt tokens found in the prefix cache: read only
};

class ContinuousBatcher {
 public:
  explicit ContinuousBatcher(const SliceCapacity& slice);

  // Whether `request` can ever run: its prompt and output fit the KV room.
  bool Fits(const BatcherRequest& request) const;
  // Queues `request` behind those waiting and returns its id: 0, 1, ...
  // in the order added. REQUIRES: Fits(request).
  size_t Add(const BatcherRequest& request);
  // Whether no request runs or waits.
  bool Idle() const { return running_.empty() && waiting_.empty(); }

  struct Step {
    double ms = 0;               // how long it takes
    long reserved = 0;           // KV tokens reserved while it runs
    std::vector<size_t> tokens;  // the requests it gives a token
  };
  // Admits what may join, computes one step and gives its tokens. A
  // request that has its output once the step is done has left.
  // REQUIRES: !Idle().
  Step Next();

  // Tokens request `id` has been given, and whether it has all of them.
  long Made(size_t id) const { return states_[id].made; }
  bool Done(size_t id) const {
    return states_[id].made == states_[id].request.output;
  }

 private:
  struct State {
    BatcherRequest request;
    long prefilled = 0;
    long made = 0;
  };

  SliceCapacity slice_;
  std::vector<State> states_;
  std::deque<size_t> waiting_;
  std::vector<size_t> running_;  // in order of admission
  long room_ = 0;                // KV tokens reserved
};

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_CONTINUOUS_BATCHER_H_
