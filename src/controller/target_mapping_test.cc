// MapTarget pairs GPUs by classes of alike GPUs (issue 18: 5,000 GPUs in a
// fraction of a second). It must pair exactly as the greedy over every
// (target, current) pair sorted by (-overlap, busy, current, target) does:
// the oracle below is that greedy, run on random clusters full of ties.
#include "controller/target_mapping.h"

#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "cluster/placement.h"
#include "mig/gpu_catalog.h"
#include "mig/layout_enumerator.h"
#include "mig/testing/gpus.h"

namespace migserve::controller {
namespace {

using cluster::ClusterState;
using cluster::GpuState;
using cluster::Slot;

using testing::A100;

// A deployment of `gpus` GPUs drawn from a few layouts and services, so
// that many GPUs are alike.
deployment::Deployment Random(std::mt19937* rng, int gpus) {
  const std::vector<mig::Layout> layouts =
      mig::MaximalLayouts(A100(), mig::MigOptions{});
  deployment::Deployment d;
  d.gpu = A100().name;
  for (int s = 0; s < 3; ++s) {
    d.services.push_back(
        {"s" + std::to_string(s), "m", Rate::Of(100).value(), 0, 0});
  }
  for (int g = 0; g < gpus; ++g) {
    deployment::DeployedGpu out;
    out.id = g;
    const mig::Layout& layout = layouts[(*rng)() % 4];
    for (const mig::Instance& i : layout.instances()) {
      deployment::PlacedInstance p;
      p.profile = A100().profiles[i.profile].name;
      p.start = i.start;
      if ((*rng)() % 3 != 0) {
        p.service = "s" + std::to_string((*rng)() % 3);
        p.batch = 8;
        // Alike for the pairing, told apart by the test.
        p.credit = 100 + static_cast<double>((*rng)() % 2);
      }
      out.instances.push_back(p);
    }
    d.gpus.push_back(out);
  }
  return d;
}

int Overlap(const GpuState& want, const GpuState& have) {
  int score = 0;
  for (const Slot& w : want.slots) {
    const Slot* h = have.Find(w.instance);
    if (h == nullptr) continue;
    int size = want.model->profiles[w.instance.profile].memory_slices;
    bool same =
        h->replica && w.replica && h->replica->service == w.replica->service;
    score += same ? 16 * size : size;
  }
  return score;
}

DesiredLayouts PairGreedy(const ClusterState& current,
                          const deployment::Deployment& target) {
  ClusterState wanted = cluster::ClusterFromDeployment(target, {}).value();
  std::vector<const GpuState*> serving;
  for (const GpuState& g : wanted.gpus) {
    if (g.HasReplica()) serving.push_back(&g);
  }
  std::vector<std::tuple<int, int, int, int>> pairs;
  for (size_t t = 0; t < serving.size(); ++t) {
    for (size_t p = 0; p < current.gpus.size(); ++p) {
      pairs.emplace_back(-Overlap(*serving[t], current.gpus[p]),
                         current.gpus[p].HasReplica() ? 1 : 0,
                         static_cast<int>(p), static_cast<int>(t));
    }
  }
  std::sort(pairs.begin(), pairs.end());
  DesiredLayouts desired;
  std::vector<bool> used(current.gpus.size()), placed(serving.size());
  for (const auto& [score, busy, p, t] : pairs) {
    if (used[p] || placed[t]) continue;
    used[p] = placed[t] = true;
    desired[current.gpus[p].id] = serving[t]->slots;
  }
  return desired;
}

bool SameSlots(const std::vector<Slot>& x, const std::vector<Slot>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].instance != y[i].instance ||
        x[i].replica.has_value() != y[i].replica.has_value() ||
        (x[i].replica && (x[i].replica->service != y[i].replica->service ||
                          x[i].replica->credit != y[i].replica->credit))) {
      return false;
    }
  }
  return true;
}

TEST(MapTargetTest, PairsAsTheGreedyOverEveryPair) {
  for (int seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    deployment::Deployment from = Random(&rng, 5 + seed % 30);
    deployment::Deployment to = Random(&rng, 5 + (seed * 7) % 30);
    ClusterState current =
        cluster::ClusterFromDeployment(from, {8, 40}).value();
    DesiredLayouts got = MapTarget(current, to).value();
    DesiredLayouts want = PairGreedy(current, to);
    ASSERT_EQ(got.size(), want.size()) << "seed " << seed;
    for (const auto& [id, slots] : want) {
      ASSERT_TRUE(got.count(id)) << "seed " << seed << " " << id;
      EXPECT_TRUE(SameSlots(got.at(id), slots)) << "seed " << seed << " " << id;
    }
  }
}

// A GPU of which a claim not migserve's holds a device (issue 91) takes no
// target GPU, even the one the target names: the replan puts it on another
// idle GPU instead of the device that cannot be had.
TEST(MapTargetTest, AGpuHeldBySomeoneElseTakesNothing) {
  deployment::Deployment target;
  target.gpu = A100().name;
  target.services.push_back({"s0", "m", Rate::Of(100).value(), 0, 0});
  for (int index : {0, 1}) {
    deployment::DeployedGpu g;
    g.id = index;
    g.node = "n";
    g.index = index;
    deployment::PlacedInstance seven;
    seven.profile = "7g.80gb";
    seven.service = "s0";
    seven.batch = 8;
    seven.credit = 100;
    g.instances.push_back(seven);
    target.gpus.push_back(g);
  }
  ClusterState current;
  for (int index = 0; index < 4; ++index) {
    current.gpus.push_back({{"n", index}, &A100(), {}, ""});
  }
  auto ids = [](const DesiredLayouts& d) {
    std::vector<std::string> out;
    for (const auto& [id, slots] : d) out.push_back(id.ToString());
    return out;
  };
  EXPECT_EQ(ids(MapTarget(current, target).value()),
            (std::vector<std::string>{"n/0", "n/1"}));
  current.gpus[0].held_by = "team-a/theirs";
  EXPECT_EQ(ids(MapTarget(current, target).value()),
            (std::vector<std::string>{"n/1", "n/2"}));
  current.gpus[2].held_by = "team-a/theirs";
  current.gpus[3].held_by = "team-b/more";
  StatusOr<DesiredLayouts> none = MapTarget(current, target);
  EXPECT_EQ(none.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(none.status().message(),
            "the target serves on 2 A100-SXM4-80GB GPUs but the cluster has 1, "
            "and 3 more that claims not migserve's hold devices of (add "
            "--spare-gpus, or GPUs of that model to the inventory)");
}

}  // namespace
}  // namespace migserve::controller
