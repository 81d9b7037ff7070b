#include "optimizer/parvagpu/parvagpu_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <optional>

#include "optimizer/deadline.h"
#include "util/tolerance.h"

namespace migserve::optimizer {
namespace {

using deployment::GpuConfig;

// ParvaGPU's instance sizes, in GPCs (compute slices).
constexpr int kSizes[] = {1, 2, 3, 4, 7};
// The optimization step dissolves GPUs that use at most this many GPCs.
constexpr int kLightGpu = 4;

// ParvaGPU's placement slots (GPC indexes) by size, in the order it tries
// them; a slot is taken if a segment starts there.
std::vector<int> PreferredSlots(int size) {
  switch (size) {
    case 1:
      return {0, 6, 4, 1, 2, 3, 5};
    case 2:
      return {0, 4, 2};
    case 3:
      return {4};
    default:
      return {0};
  }
}

struct Segment {
  int service;
  int size;
};

struct Gpu {
  int usage = 0;
  std::map<int, Segment> slots;  // by ParvaGPU's placement slot

  bool Holds(int size) const {
    return std::any_of(slots.begin(), slots.end(),
                       [&](const auto& s) { return s.second.size == size; });
  }
};

// ParvaGPU's segment allocator: it counts GPCs; the layout of each GPU is
// made legal at the end (LegalConfig).
class Allocator {
 public:
  explicit Allocator(int gpcs) : gpcs_(gpcs) {}

  // Places `segments` largest first (ParvaGPU's per-size queues), each on
  // the best-fitting GPU: the fewest GPCs left that still hold it, at most
  // one 3g per GPU; an empty GPU if none fits.
  void PlaceAll(std::vector<Segment> segments) {
    std::stable_sort(
        segments.begin(), segments.end(),
        [](const Segment& a, const Segment& b) { return a.size > b.size; });
    for (const Segment& s : segments) Place(s);
  }

  std::vector<Gpu> gpus;

 private:
  void Place(const Segment& s) {
    int best = -1;
    int least_left = INT_MAX;
    for (size_t i = 0; i < gpus.size(); ++i) {
      int left = gpcs_ - gpus[i].usage - s.size;
      if (left < 0 || left >= least_left) continue;
      if (s.size == 3 && gpus[i].Holds(3)) continue;
      best = static_cast<int>(i);
      least_left = left;
    }
    if (best < 0) {
      gpus.emplace_back();
      best = static_cast<int>(gpus.size()) - 1;
    }
    Gpu& g = gpus[best];
    int slot = -1;
    for (int candidate : PreferredSlots(s.size)) {
      if (g.slots.count(candidate) == 0) {
        slot = candidate;
        break;
      }
    }
    for (int candidate = 0; slot < 0; ++candidate) {
      if (g.slots.count(candidate) == 0) slot = candidate;
    }
    g.slots[slot] = s;
    g.usage += s.size;
  }

  int gpcs_;
};

// Finds starts for `segments` (largest first) that make a legal layout.
bool Arrange(const Problem& problem, const std::map<int, int>& profile_of_size,
             const std::vector<Segment>& segments, size_t k,
             mig::Layout* layout, std::vector<int>* services) {
  if (k == segments.size()) return true;
  int profile = profile_of_size.at(segments[k].size);
  for (int start : problem.gpu.profiles[profile].starts) {
    mig::Layout next = *layout;
    next.Add({profile, start});
    if (!mig::IsLegal(problem.gpu, next, problem.mig)) continue;
    mig::Layout saved = *layout;
    *layout = std::move(next);
    if (Arrange(problem, profile_of_size, segments, k + 1, layout, services)) {
      return true;
    }
    *layout = std::move(saved);
  }
  return false;
}

// The GPU config of `g` with a legal layout, or nullopt if none exists.
std::optional<GpuConfig> LegalConfig(const Problem& problem,
                                     const std::map<int, int>& profile_of_size,
                                     const Gpu& g) {
  std::vector<Segment> segments;
  for (const auto& [slot, s] : g.slots) segments.push_back(s);
  std::stable_sort(
      segments.begin(), segments.end(),
      [](const Segment& a, const Segment& b) { return a.size > b.size; });
  mig::Layout layout;
  std::vector<int> unused;
  if (!Arrange(problem, profile_of_size, segments, 0, &layout, &unused)) {
    return std::nullopt;
  }
  // Instances of one size are interchangeable: hand them out in order.
  GpuConfig config{layout, {}};
  std::vector<bool> used(segments.size(), false);
  for (const mig::Instance& i : layout.instances()) {
    for (size_t k = 0; k < segments.size(); ++k) {
      if (!used[k] && profile_of_size.at(segments[k].size) == i.profile) {
        used[k] = true;
        config.services.push_back(segments[k].service);
        break;
      }
    }
  }
  return config;
}

// ParvaGPU's configurator: per service short of its rate, segments of its
// optimal size (the best rate per GPC, `cap(service, size)`) for all but
// the last part of what it misses, then the smallest size that covers the
// rest. Sets `unfit` to a service that fits no size (and stops there).
template <typename Cap>
std::vector<Segment> Segments(const Problem& problem,
                              const deployment::CompletionRates& initial,
                              const std::map<int, int>& profile_of_size,
                              const Cap& cap, int* unfit) {
  std::vector<Segment> segments;
  for (int j = 0; j < problem.num_services(); ++j) {
    if (deployment::Satisfied(initial[j])) continue;
    double rest = (1 - initial[j]) * problem.caps.required(j);
    int optimal = 0;
    double per_gpc = 0;
    for (const auto& [size, p] : profile_of_size) {
      if (cap(j, size) / size > per_gpc) {
        per_gpc = cap(j, size) / size;
        optimal = size;
      }
    }
    if (optimal == 0) {
      *unfit = j;
      return segments;
    }
    double trp = cap(j, optimal);
    int count = static_cast<int>(std::floor(rest / trp));
    if (rest - count * trp <= kRateTolerance * rest) --count;
    double last = rest - count * trp;
    segments.insert(segments.end(), count, {j, optimal});
    for (const auto& [size, p] : profile_of_size) {
      if (cap(j, size) >= last - kRateTolerance * rest) {
        segments.push_back({j, size});
        break;
      }
    }
  }
  return segments;
}

}  // namespace

Solution ParvaGpuOptimizer::Solve(const Problem& problem,
                                  const deployment::CompletionRates& initial,
                                  const SolveOptions& options) {
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  std::map<int, int> profile_of_size;
  for (int size : kSizes) {
    int p = problem.gpu.SmallestProfileWithCompute(size);
    if (p >= 0) profile_of_size[size] = p;
  }
  // cap[j][size]: the throughput of service j's best triplet of that size.
  auto cap = [&](int j, int size) {
    auto p = profile_of_size.find(size);
    return p == profile_of_size.end() ? 0.0
                                      : problem.caps.throughput(j, p->second);
  };
  int unfit = -1;
  std::vector<Segment> segments =
      Segments(problem, initial, profile_of_size, cap, &unfit);
  if (unfit >= 0) {
    return Infeasible(fmt::format(
        "parvagpu: service '{}' meets its latency on no instance size",
        problem.workload.services[unfit].name));
  }
  Allocator allocator(problem.gpu.compute_slices);
  allocator.PlaceAll(segments);
  int before = static_cast<int>(allocator.gpus.size());
  // Optimization: light GPUs give their segments back as 2g and 1g ones.
  std::vector<double> owed(problem.num_services(), 0);
  // Every GPU holds a feasible allocation between two steps: at the time
  // limit the optimization stops there.
  bool stopped = false;
  for (size_t g = allocator.gpus.size(); g-- > 0;) {
    if (SecondsLeft(deadline) <= 0) {
      stopped = true;
      break;
    }
    if (allocator.gpus[g].usage > kLightGpu) continue;
    for (int slot = 0; slot < problem.gpu.compute_slices; ++slot) {
      Gpu& gpu = allocator.gpus[g];
      auto it = gpu.slots.find(slot);
      if (it == gpu.slots.end()) continue;
      Segment s = it->second;
      double one = cap(s.service, 1), two = cap(s.service, 2);
      if (one <= 0 && two <= 0) continue;
      gpu.usage -= s.size;
      gpu.slots.erase(it);
      double& rate = owed[s.service];
      rate += cap(s.service, s.size);
      std::vector<Segment> smaller;
      auto take = [&](int size, int count) {
        for (int k = 0; k < count; ++k) {
          smaller.push_back({s.service, size});
          rate -= cap(s.service, size);
        }
      };
      if (two > 0 && (one <= 0 || two / 2 > one)) {
        take(2, static_cast<int>(one <= 0 ? std::ceil(rate / two)
                                          : std::floor(rate / two)));
      }
      if (one > 0) take(1, static_cast<int>(std::ceil(rate / one)));
      allocator.PlaceAll(smaller);
    }
  }
  Solution solution;
  for (const Gpu& g : allocator.gpus) {
    if (g.usage == 0) continue;
    std::optional<GpuConfig> config = LegalConfig(problem, profile_of_size, g);
    if (!config) {
      return Infeasible(fmt::format(
          "parvagpu: {} has no legal layout for {} GPCs of segments",
          problem.gpu.name, g.usage));
    }
    solution.configs.push_back(std::move(*config));
  }
  solution.info.parvagpu = ParvaGpuInfo{before};
  if (stopped) solution.outcome = Outcome::kTimeLimit;
  if (!deployment::AllSatisfied(
          deployment::Completion(solution.configs, problem.caps, initial))) {
    return Infeasible("parvagpu: its segments leave a service short");
  }
  return solution;
}

}  // namespace migserve::optimizer
