#include "llm/balanced_batchers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "llm/continuous_batcher.h"

namespace migserve::llm {

namespace {

// Balancers that give a request to the replica with the fewest of their
// requests in flight per unit of weight; among equals, nginx's smooth
// weighted rotation: each gains its weight, the one with the most gained
// is picked and gives back what all gained. Request i is balancer i's
// modulo their number.
class LeastOutstanding {
 public:
  LeastOutstanding(const std::vector<BalancedReplica>& replicas, int balancers)
      : replicas_(replicas),
        in_flight_(balancers, std::vector<long>(replicas.size(), 0)),
        current_(balancers, std::vector<double>(replicas.size(), 0)) {}

  // The replica request `i` of `conversation` goes to; it is in flight
  // there until Done.
  size_t Pick(size_t i, long conversation, Balancing balancing) {
    const size_t b = i % in_flight_.size();
    std::vector<long>& counts = in_flight_[b];
    if (balancing == Balancing::kAffinity) {
      // The first replica with room in the conversation's order: the
      // least score among those with less than their batch in flight.
      size_t first = replicas_.size();
      double least = std::numeric_limits<double>::infinity();
      for (size_t r = 0; r < replicas_.size(); ++r) {
        if (counts[r] >= replicas_[r].slice.max_batch) continue;
        const double score = RingScore(conversation, r);
        if (score < least) {
          least = score;
          first = r;
        }
      }
      if (first < replicas_.size()) {
        ++counts[first];
        return first;
      }
    }
    auto fewer = [&](size_t x, size_t y) {  // x's count per weight < y's
      return static_cast<double>(counts[x]) * replicas_[y].weight <
             static_cast<double>(counts[y]) * replicas_[x].weight;
    };
    const size_t n = replicas_.size();
    size_t best = 0;
    for (size_t r = 1; r < n; ++r) {
      if (fewer(r, best)) best = r;
    }
    size_t pick = n;
    double gained = 0;
    for (size_t r = 0; r < n; ++r) {
      if (fewer(best, r)) continue;  // not among the equals
      current_[b][r] += replicas_[r].weight;
      gained += replicas_[r].weight;
      if (pick == n || current_[b][r] > current_[b][pick]) pick = r;
    }
    current_[b][pick] -= gained;
    ++counts[pick];
    return pick;
  }
  // Replica `r`'s place in `conversation`'s order, the least first:
  // weighted rendezvous hashing (-ln(u) / weight of a uniform u per
  // conversation and replica), so that a replica is first for its share of
  // the weights, as on nginx's ring, and the order is the same at every
  // balancer.
  double RingScore(long conversation, size_t r) const {
    // SplitMix64 of the pair: a uniform u in [0, 1).
    uint64_t z = static_cast<uint64_t>(conversation) * 0x9e3779b97f4a7c15ULL +
                 r * 0xbf58476d1ce4e5b9ULL + 0x94d049bb133111ebULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    return -std::log1p(-u) / replicas_[r].weight;
  }

  // Request `i` has its last token from `replica`.
  void Done(size_t i, size_t replica) {
    --in_flight_[i % in_flight_.size()][replica];
  }

 private:
  const std::vector<BalancedReplica>& replicas_;
  std::vector<std::vector<long>> in_flight_;  // per balancer, per replica
  std::vector<std::vector<double>> current_;  // the rotation's weights
};

}  // namespace

BatcherSamples RunBalancedBatchers(const std::vector<BalancedReplica>& replicas,
                                   int balancers, Balancing balancing,
                                   const LlmTerms& terms,
                                   const queueing::Traffic& traffic,
                                   const BatcherRun& run) {
  std::vector<BatcherArrival> requests = BatcherArrivals(terms, traffic, run);
  BatcherSamples out;
  const size_t n = replicas.size();
  std::vector<ContinuousBatcher> batchers;
  for (const BalancedReplica& r : replicas) batchers.emplace_back(r.slice);
  for (const BatcherArrival& r : requests) {
    for (const ContinuousBatcher& b : batchers) {
      if (!b.Fits({r.prompt, r.output, r.cached})) {
        out.fits = false;
        return out;
      }
    }
  }
  constexpr double kNever = std::numeric_limits<double>::infinity();
  // Per replica: the request of each batcher id, when its step ends
  // (kNever: not stepping) and that step.
  std::vector<std::vector<size_t>> request_of(n);
  std::vector<double> step_end(n, kNever);
  std::vector<ContinuousBatcher::Step> steps(n);
  std::vector<double> occupied(n, 0);
  LeastOutstanding balancer(replicas, std::max(1, balancers));
  if (!(terms.prefix_cache_hit_rate > 0)) {
    balancing = Balancing::kLeastOutstanding;
  }
  std::vector<double> first_s(requests.size(), -1), done_s(requests.size(), -1);
  out.dispatched.assign(n, 0);
  // Per conversation, the replica of its last request.
  std::map<long, size_t> held;
  double prompt_tokens = 0, cached_tokens = 0;  // the counted requests'
  size_t next = 0;  // the first request not dispatched
  double now = 0, tokens = 0;
  while (true) {
    double event = next < requests.size() ? requests[next].arrival_s : kNever;
    for (double end : step_end) event = std::min(event, end);
    if (event == kNever) break;
    now = event;
    // The steps that end now give their tokens.
    for (size_t r = 0; r < n; ++r) {
      if (step_end[r] != now) continue;
      step_end[r] = kNever;
      for (size_t id : steps[r].tokens) {
        size_t i = request_of[r][id];
        tokens += 1;
        if (batchers[r].Made(id) == 1) first_s[i] = now;
        if (batchers[r].Done(id)) {
          done_s[i] = now;
          balancer.Done(i, r);
        }
      }
    }
    // The requests that arrived by now go where their balancer has the
    // least in flight per weight.
    for (; next < requests.size() && requests[next].arrival_s <= now; ++next) {
      const BatcherArrival& a = requests[next];
      const size_t pick = balancer.Pick(next, a.conversation, balancing);
      ++out.dispatched[pick];
      auto last = held.try_emplace(a.conversation, pick).first;
      const long cached = a.opens || last->second == pick ? a.cached : 0;
      last->second = pick;
      if (next >= requests.size() / 10) {
        prompt_tokens += static_cast<double>(a.prompt);
        cached_tokens += static_cast<double>(cached);
      }
      request_of[pick].push_back(next);
      batchers[pick].Add({a.prompt, a.output, cached});
    }
    // Replicas with work and no step start one.
    for (size_t r = 0; r < n; ++r) {
      if (step_end[r] != kNever || batchers[r].Idle()) continue;
      steps[r] = batchers[r].Next();
      double step_s = steps[r].ms / 1e3;
      occupied[r] += step_s * static_cast<double>(steps[r].reserved) /
                     static_cast<double>(replicas[r].slice.kv_tokens);
      step_end[r] = now + step_s;
    }
  }
  for (size_t i = requests.size() / 10; i < requests.size(); ++i) {
    const BatcherArrival& r = requests[i];
    out.ttft_ms.push_back((first_s[i] - r.arrival_s) * 1e3);
    if (r.output > 1) {
      out.tpot_ms.push_back((done_s[i] - first_s[i]) * 1e3 /
                            static_cast<double>(r.output - 1));
    }
    out.latency_ms.push_back((done_s[i] - r.arrival_s) * 1e3);
  }
  for (double o : occupied) {
    out.kv_occupancy += now > 0 ? o / now / static_cast<double>(n) : 0;
  }
  out.output_tokens_per_s = now > 0 ? tokens / now : 0;
  out.prefix_cache_hit_rate =
      prompt_tokens > 0 ? cached_tokens / prompt_tokens : 0;
  return out;
}

}  // namespace migserve::llm
