#include "controller/max_flow.h"

#include <algorithm>
#include <queue>

#include "util/tolerance.h"

namespace migserve::controller {

void MaxFlow::AddEdge(int from, int to, double capacity) {
  adjacency_[from].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({to, capacity});
  adjacency_[to].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({from, 0});
}

bool MaxFlow::BuildLevels(int source, int sink) {
  level_.assign(adjacency_.size(), -1);
  std::queue<int> queue;
  level_[source] = 0;
  queue.push(source);
  while (!queue.empty()) {
    int node = queue.front();
    queue.pop();
    for (int e : adjacency_[node]) {
      if (edges_[e].capacity > kRoundingTolerance && level_[edges_[e].to] < 0) {
        level_[edges_[e].to] = level_[node] + 1;
        queue.push(edges_[e].to);
      }
    }
  }
  return level_[sink] >= 0;
}

double MaxFlow::Push(int node, int sink, double limit) {
  if (node == sink) return limit;
  for (size_t& k = next_[node]; k < adjacency_[node].size(); ++k) {
    int e = adjacency_[node][k];
    Edge& edge = edges_[e];
    if (edge.capacity <= kRoundingTolerance ||
        level_[edge.to] != level_[node] + 1) {
      continue;
    }
    double pushed = Push(edge.to, sink, std::min(limit, edge.capacity));
    if (pushed > kRoundingTolerance) {
      edge.capacity -= pushed;
      edges_[e ^ 1].capacity += pushed;
      return pushed;
    }
  }
  return 0;
}

double MaxFlow::Solve(int source, int sink) {
  double total = 0;
  while (BuildLevels(source, sink)) {
    next_.assign(adjacency_.size(), 0);
    while (double pushed = Push(source, sink, kInfinity)) total += pushed;
  }
  return total;
}

}  // namespace migserve::controller
