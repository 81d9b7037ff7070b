#include "serving/request_router.h"

namespace migserve::serving {

std::optional<RoutingPolicy> ParseRoutingPolicy(std::string_view name) {
  if (name == "weighted") return RoutingPolicy::kWeighted;
  if (name == "round-robin") return RoutingPolicy::kRoundRobin;
  if (name == "least-outstanding") return RoutingPolicy::kLeastOutstanding;
  return std::nullopt;
}

RequestRouter::RequestRouter(RoutingPolicy policy,
                             std::vector<std::vector<int>> groups,
                             std::vector<long> weights)
    : policy_(policy),
      groups_(std::move(groups)),
      weights_(std::move(weights)),
      current_(groups_.size(), 0),
      next_in_(groups_.size(), 0) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].empty()) weights_[g] = 0;
    total_weight_ += weights_[g];
    all_.insert(all_.end(), groups_[g].begin(), groups_[g].end());
  }
}

int RequestRouter::Pick(double t, std::vector<queueing::ReplicaQueue>* queues) {
  switch (policy_) {
    case RoutingPolicy::kWeighted: {
      // nginx's smooth weighted round robin: every group gains its weight,
      // the richest is picked and pays the total.
      size_t best = 0;
      for (size_t g = 0; g < groups_.size(); ++g) {
        current_[g] += weights_[g];
        if (current_[g] > current_[best]) best = g;
      }
      current_[best] -= total_weight_;
      const std::vector<int>& members = groups_[best];
      int replica = members[next_in_[best]];
      next_in_[best] = (next_in_[best] + 1) % members.size();
      return replica;
    }
    case RoutingPolicy::kRoundRobin: {
      int replica = all_[next_];
      next_ = (next_ + 1) % all_.size();
      return replica;
    }
    case RoutingPolicy::kLeastOutstanding: {
      int best = -1;
      int fewest = 0;
      for (int r : all_) {
        (*queues)[r].AdvanceTo(t);
        int n = (*queues)[r].Outstanding(t);
        if (best < 0 || n < fewest) {
          best = r;
          fewest = n;
        }
      }
      return best;
    }
  }
  return all_.front();
}

}  // namespace migserve::serving
