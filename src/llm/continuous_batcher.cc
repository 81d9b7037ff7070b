#include "llm/continuous_batcher.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace migserve::llm {

ContinuousBatcher::ContinuousBatcher(const SliceCapacity& slice)
    : slice_(slice) {}

bool ContinuousBatcher::Fits(const BatcherRequest& request) const {
  return request.prompt + request.output <= slice_.kv_tokens;
}

size_t ContinuousBatcher::Add(const BatcherRequest& request) {
  states_.push_back({request, 0, 0});
  waiting_.push_back(states_.size() - 1);
  return states_.size() - 1;
}

ContinuousBatcher::Step ContinuousBatcher::Next() {
  // The step's token budget goes to the running requests first (a decode
  // one token, a prefill its next chunk), then to those waiting, in order
  // (vLLM V1's scheduler).
  const long unlimited = std::numeric_limits<long>::max();
  long budget =
      slice_.max_batched_tokens > 0 ? slice_.max_batched_tokens : unlimited;
  StepLoad load;
  std::vector<std::pair<size_t, long>> chunks;  // request, tokens
  auto prefill = [&](size_t i) {
    State& s = states_[i];
    long c = std::min(s.request.prompt - s.prefilled, budget);
    if (c <= 0) return;
    load.prefill_tokens += c;
    load.context_tokens += s.prefilled;
    load.attention_pairs +=
        PrefillPairs(static_cast<double>(s.prefilled), static_cast<double>(c));
    budget -= c;
    chunks.emplace_back(i, c);
  };
  std::vector<size_t> decoding;
  for (size_t i : running_) {
    const State& s = states_[i];
    if (s.prefilled < s.request.prompt) {
      prefill(i);
    } else if (budget > 0) {
      --budget;
      ++load.decodes;
      load.context_tokens += s.request.prompt + s.made;
      load.attention_pairs += static_cast<double>(s.request.prompt + s.made);
      decoding.push_back(i);
    }
  }
  while (!waiting_.empty() &&
         static_cast<int>(running_.size()) < slice_.max_batch && budget > 0) {
    State& s = states_[waiting_.front()];
    long need = s.request.prompt + s.request.output;
    if (room_ + need > slice_.kv_tokens) break;
    room_ += need;
    s.prefilled = s.request.cached;  // read, not computed
    running_.push_back(waiting_.front());
    waiting_.pop_front();
    prefill(running_.back());
  }
  Step step;
  step.ms = slice_.StepMs(load);
  step.reserved = room_;
  // A prompt's last chunk gives its first token; a decode its next.
  for (auto [i, c] : chunks) {
    State& s = states_[i];
    s.prefilled += c;
    if (s.prefilled == s.request.prompt) step.tokens.push_back(i);
  }
  step.tokens.insert(step.tokens.end(), decoding.begin(), decoding.end());
  for (size_t i : step.tokens) {
    State& s = states_[i];
    if (++s.made == s.request.output)
      room_ -= s.request.prompt + s.request.output;
  }
  std::erase_if(running_, [&](size_t i) { return Done(i); });
  return step;
}

}  // namespace migserve::llm
