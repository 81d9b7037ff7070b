#include "dra/claim_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <tuple>

namespace migserve::dra {

namespace {

// Whether `a` and `b` share no memory slice.
bool Disjoint(const mig::GpuModel& model, const mig::Instance& a,
              const mig::Instance& b) {
  return !mig::Overlaps(model, a, b);
}

// The holding claim to take before `want` on `gpu`, where first-fit would
// put `want`'s profile at `lands` instead: the device first-fit gives some
// profile that starts below `want` and leaves `want`'s memory free;
// preferring one that covers `lands`, then the most memory slices (fewer
// holds: each is a MIG device the driver creates and destroys), then the
// fewest compute slices. nullopt if none.
std::optional<Allocation> Hold(const FirstFitNode& node,
                               const mig::GpuModel& model, int gpu,
                               const mig::Instance& want,
                               const mig::Instance& lands) {
  std::optional<Allocation> best;
  auto rank = [&](const Allocation& a) {
    const mig::Profile& p = model.profiles[a.instance.profile];
    return std::tuple(Disjoint(model, a.instance, lands), -p.memory_slices,
                      p.compute_slices);
  };
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    std::optional<Allocation> a = node.Peek({static_cast<int>(p), gpu});
    if (!a || a->instance.start >= want.start ||
        !Disjoint(model, a->instance, want)) {
      continue;
    }
    if (!best || rank(*a) < rank(*best)) best = a;
  }
  return best;
}

}  // namespace

StatusOr<std::vector<ClaimStep>> ClaimInstances(
    FirstFitNode* node, int gpu, const std::vector<mig::Instance>& add) {
  const mig::GpuModel& model = node->model();
  std::vector<mig::Instance> order = add;
  std::sort(order.begin(), order.end(),
            [](const mig::Instance& a, const mig::Instance& b) {
              return std::tie(a.start, a.profile) <
                     std::tie(b.start, b.profile);
            });
  std::vector<ClaimStep> steps;
  std::vector<Allocation> holds;
  for (const mig::Instance& want : order) {
    std::string name = fmt::format(
        "{}@{} on GPU {}", model.profiles[want.profile].name, want.start, gpu);
    while (true) {
      std::optional<Allocation> lands = node->Peek({want.profile, gpu});
      if (!lands || lands->instance.start > want.start) {
        return Status::InvalidArgument(
            fmt::format("{} does not fit beside {}", name,
                        node->layout(gpu).ToString(model)));
      }
      if (lands->instance.start == want.start) break;
      std::optional<Allocation> hold =
          Hold(*node, model, gpu, want, lands->instance);
      if (!hold) {
        return Status::Internal(fmt::format(
            "no holding claim keeps first-fit from putting {} at {}", name,
            lands->instance.start));
      }
      node->Allocate({hold->instance.profile, gpu});
      holds.push_back(*hold);
      steps.push_back({ClaimStep::Kind::kHold, *hold});
    }
    std::optional<Allocation> placed = node->Allocate({want.profile, gpu});
    steps.push_back({ClaimStep::Kind::kClaim, *placed});
  }
  for (const Allocation& hold : holds) {
    node->Release(hold);
    steps.push_back({ClaimStep::Kind::kRelease, hold});
  }
  return steps;
}

StatusOr<std::vector<ClaimStep>> ClaimLayouts(
    const mig::GpuModel& model, const std::vector<mig::Layout>& layouts) {
  FirstFitNode node(model, static_cast<int>(layouts.size()));
  std::vector<ClaimStep> steps;
  for (size_t gpu = 0; gpu < layouts.size(); ++gpu) {
    MIGSERVE_ASSIGN_OR_RETURN(
        std::vector<ClaimStep> more,
        ClaimInstances(&node, static_cast<int>(gpu), layouts[gpu].instances()));
    steps.insert(steps.end(), more.begin(), more.end());
  }
  return steps;
}

}  // namespace migserve::dra
