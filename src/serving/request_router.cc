#include "serving/request_router.h"

#include <cassert>

#include "cluster/routing.h"
#include "util/enum_names.h"

namespace migserve::serving {
namespace {

// The policies that model no router kind.
constexpr EnumName<RoutingPolicy> kComparisonNames[] = {
    {RoutingPolicy::kWeighted, "weighted"},
    {RoutingPolicy::kRoundRobin, "round-robin"},
    {RoutingPolicy::kLeastOutstanding, "least-outstanding"},
};

constexpr EnumName<InGroup> kInGroupNames[] = {
    {InGroup::kRoundRobin, "round-robin"},
    {InGroup::kLeastRequest, "least-request"},
};

}  // namespace

std::optional<RoutingPolicy> ParseRoutingPolicy(std::string_view name) {
  if (std::optional<queueing::RouterKind> router =
          queueing::ParseRouter(name)) {
    return PolicyOf(*router);
  }
  return ValueOf(kComparisonNames, name);
}

std::vector<std::string> RoutingPolicyNames() {
  std::vector<std::string> names = queueing::RouterNames();
  for (const EnumName<RoutingPolicy>& c : kComparisonNames) {
    names.emplace_back(c.name);
  }
  return names;
}

RoutingPolicy PolicyOf(queueing::RouterKind router) {
  // A switch over the dispatch: a dispatch added without its policy fails
  // to compile (-Wswitch), not at run time.
  switch (router.traits().dispatch) {
    case queueing::Dispatch::kProxies:
      return RoutingPolicy::kProxies;
    case queueing::Dispatch::kGroupThenReplica:
      return RoutingPolicy::kGroupThenReplica;
    case queueing::Dispatch::kReplica:
      return RoutingPolicy::kReplica;
  }
  assert(false && "a dispatch without its routing policy");
  return RoutingPolicy::kProxies;
}

std::optional<InGroup> ParseInGroup(std::string_view name) {
  return ValueOf(kInGroupNames, name);
}

size_t RequestRouter::Rotation::Next() {
  size_t best = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    current[i] += weights[i];
    if (current[i] > current[best]) best = i;
  }
  current[best] -= total;
  return best;
}

RequestRouter::RequestRouter(RoutingPolicy policy,
                             std::vector<std::vector<int>> groups,
                             std::vector<long> weights,
                             const RouterSetup& setup)
    : policy_(policy),
      in_group_(setup.in_group),
      groups_(std::move(groups)),
      next_in_(groups_.size(), 0),
      rng_(setup.seed) {
  std::vector<double> group_weights;
  std::vector<double> replica_weights;
  for (size_t g = 0; g < groups_.size(); ++g) {
    group_weights.push_back(
        groups_[g].empty() ? 0 : static_cast<double>(weights[g]));
    for (int r : groups_[g]) {
      all_.push_back(r);
      replica_weights.push_back(
          cluster::ReplicaWeight(weights[g], groups_[g].size()));
    }
  }
  auto rotation = [](const std::vector<double>& w) {
    Rotation r{w, std::vector<double>(w.size(), 0), 0};
    for (double x : w) r.total += x;
    return r;
  };
  over_groups_ = rotation(group_weights);
  proxies_.assign(policy == RoutingPolicy::kProxies ? setup.proxies : 0,
                  rotation(replica_weights));
  if (policy == RoutingPolicy::kGroupThenReplica) {
    group_pick_ = std::discrete_distribution<int>(group_weights.begin(),
                                                  group_weights.end());
  }
  if (policy == RoutingPolicy::kReplica) {
    replica_pick_ = std::discrete_distribution<int>(replica_weights.begin(),
                                                    replica_weights.end());
  }
}

int RequestRouter::Next(size_t group) {
  const std::vector<int>& members = groups_[group];
  int replica = members[next_in_[group]];
  next_in_[group] = (next_in_[group] + 1) % members.size();
  return replica;
}

int RequestRouter::LeastOutstanding(
    const std::vector<int>& among, double t,
    std::vector<queueing::ReplicaQueue>* queues) const {
  int best = -1;
  int fewest = 0;
  for (int r : among) {
    (*queues)[r].AdvanceTo(t);
    int n = (*queues)[r].Outstanding(t);
    if (best < 0 || n < fewest) {
      best = r;
      fewest = n;
    }
  }
  return best;
}

int RequestRouter::Pick(double t, std::vector<queueing::ReplicaQueue>* queues) {
  switch (policy_) {
    case RoutingPolicy::kProxies: {
      size_t proxy =
          std::uniform_int_distribution<size_t>(0, proxies_.size() - 1)(rng_);
      return all_[proxies_[proxy].Next()];
    }
    case RoutingPolicy::kGroupThenReplica: {
      int group = group_pick_(rng_);
      if (in_group_ == InGroup::kLeastRequest) {
        return LeastOutstanding(groups_[group], t, queues);
      }
      return Next(group);
    }
    case RoutingPolicy::kReplica:
      return all_[replica_pick_(rng_)];
    case RoutingPolicy::kWeighted:
      return Next(over_groups_.Next());
    case RoutingPolicy::kRoundRobin: {
      int replica = all_[next_];
      next_ = (next_ + 1) % all_.size();
      return replica;
    }
    case RoutingPolicy::kLeastOutstanding:
      return LeastOutstanding(all_, t, queues);
  }
  return all_.front();
}

}  // namespace migserve::serving
