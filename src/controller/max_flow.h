// Maximum flow (Dinic's algorithm) on a small graph with real capacities.
// The safety checker needs one minimum cut per service; no library on our
// list offers max-flow, and Boost.Graph is not worth its weight for this.
#ifndef MIGSERVE_CONTROLLER_MAX_FLOW_H_
#define MIGSERVE_CONTROLLER_MAX_FLOW_H_

#include <cstddef>
#include <limits>
#include <vector>

namespace migserve::controller {

class MaxFlow {
 public:
  static constexpr double kInfinity = std::numeric_limits<double>::infinity();

  explicit MaxFlow(int nodes) : adjacency_(nodes) {}

  // Adds an edge from `from` to `to` with `capacity` (>= 0, may be infinite).
  void AddEdge(int from, int to, double capacity);

  // Returns the value of a maximum flow from `source` to `sink`.
  double Solve(int source, int sink);

 private:
  struct Edge {
    int to;
    double capacity;
  };

  bool BuildLevels(int source, int sink);
  double Push(int node, int sink, double limit);

  std::vector<Edge> edges_;  // edge k and k ^ 1 are each other's reverse
  std::vector<std::vector<int>> adjacency_;
  std::vector<int> level_;
  std::vector<std::size_t> next_;
};

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_MAX_FLOW_H_
