// The books against a reference that reads every node and pod afresh: after
// each of many random changes (nodes that come, go, repartition or report
// nothing; pods that claim, contest, move or drop slots, also on
// GPUs that do not exist) the books hold the same GPUs, slots and replicas,
// and the same capacity to the last bit.
#include "kubernetes/cluster_books.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "mig/gpu_catalog.h"
#include "mig/testing/gpus.h"

namespace migserve::kubernetes {
namespace {

using testing::A100;
using testing::A100Instance;

std::vector<mig::Layout> Layouts() {
  return {
      mig::Layout({A100Instance("7g.80gb", 0)}),
      mig::Layout({A100Instance("4g.40gb", 0), A100Instance("3g.40gb", 4)}),
      mig::Layout({A100Instance("3g.40gb", 0), A100Instance("3g.40gb", 4)})};
}

// What one look at every node and pod makes of them.
ClusterState Reference(
    const std::map<std::string, std::vector<mig::Layout>>& nodes,
    const std::map<std::string, PodClaim>& claims) {
  ClusterState state;
  for (const auto& [name, layouts] : nodes) {
    for (size_t i = 0; i < layouts.size(); ++i) {
      GpuState g{{name, static_cast<int>(i)}, &A100(), {}};
      for (const mig::Instance& instance : layouts[i].instances()) {
        g.slots.push_back({instance, std::nullopt});
      }
      state.gpus.push_back(std::move(g));
    }
  }
  state.Sort();
  std::map<Slot*, int> claimed;
  for (const auto& [name, claim] : claims) {
    GpuState* g = state.FindGpu(claim.gpu);
    int p = g == nullptr ? -1 : A100().FindProfile(claim.profile);
    Slot* slot = p < 0 ? nullptr : g->Find({p, claim.start});
    if (slot == nullptr) continue;
    slot->replica = claim.replica;
    ++claimed[slot];
  }
  for (const auto& [slot, count] : claimed) {
    if (count > 1) slot->replica.reset();
  }
  return state;
}

std::string Describe(const ClusterState& state) {
  std::string out;
  for (const GpuState& g : state.gpus) {
    out += g.id.ToString() + ":";
    for (const Slot& s : g.slots) {
      out += fmt::format(" {}@{}={}", s.instance.profile, s.instance.start,
                         s.replica ? fmt::format("{}/{}", s.replica->service,
                                                 s.replica->credit)
                                   : "-");
    }
    out += "\n";
  }
  return out;
}

TEST(ClusterBooksTest, AgreeWithAFreshLookAfterEveryChange) {
  const std::vector<mig::Layout> layouts = Layouts();
  const char* profiles[] = {"7g.80gb", "4g.40gb", "3g.40gb", "1g.10gb"};
  std::mt19937 rng(11);
  std::vector<std::string> warnings;
  ClusterBooks books([&](const std::string& w) { warnings.push_back(w); });
  std::map<std::string, std::vector<mig::Layout>> nodes;
  std::map<std::string, PodClaim> claims;
  int versions = 0;
  int last_version = books.gpus_version();
  int counted_max = 0;
  for (int step = 0; step < 3000; ++step) {
    if (rng() % 4 == 0) {
      std::string name = "n" + std::to_string(rng() % 3);
      if (rng() % 3 == 0) {  // gone, or not reported yet
        books.SetNode(name, {});
        nodes.erase(name);
      } else {
        std::vector<GpuLayout> reported;
        std::vector<mig::Layout> chosen;
        int gpus = 1 + static_cast<int>(rng() % 2);
        for (int g = 0; g < gpus; ++g) {
          chosen.push_back(layouts[rng() % layouts.size()]);
          reported.push_back({&A100(), chosen.back()});
        }
        books.SetNode(name, reported);
        nodes[name] = chosen;
      }
    } else {
      std::string name = "p" + std::to_string(rng() % 12);
      if (rng() % 5 == 0) {
        books.SetPod(name, std::nullopt);
        claims.erase(name);
      } else {
        PodClaim claim{
            {"n" + std::to_string(rng() % 4), static_cast<int>(rng() % 3)},
            profiles[rng() % 4],
            static_cast<int>(rng() % 2) * 4,
            {rng() % 2 ? "a" : "b", 8, 1, 0.1 + (rng() % 100) / 3.0, 10}};
        books.SetPod(name, claim);
        claims[name] = claim;
      }
    }
    ClusterState want = Reference(nodes, claims);
    ASSERT_EQ(Describe(books.state()), Describe(want)) << "step " << step;
    ASSERT_EQ(books.capacity(), want.Capacity()) << "step " << step;
    counted_max =
        std::max(counted_max, static_cast<int>(want.Capacity().size()));
    if (books.gpus_version() != last_version) {
      ++versions;
      last_version = books.gpus_version();
    }
  }
  // The walk did reach what it is meant to: both services served, GPUs
  // coming and going, contested and unknown slots reported.
  EXPECT_EQ(counted_max, 2);
  EXPECT_GT(versions, 100);
  auto warned = [&](const std::string& part) {
    return std::any_of(warnings.begin(), warnings.end(), [&](const auto& w) {
      return w.find(part) != std::string::npos;
    });
  };
  EXPECT_TRUE(warned("both claim instance"));
  EXPECT_TRUE(warned("of the cluster; not counted"));
}

// A repartition changes the node's reported layouts: only the GPU whose
// layout changed loses its replicas; the set of GPUs (its version) stays.
TEST(ClusterBooksTest, ARepartitionKeepsTheOtherGpusAndTheVersion) {
  const std::vector<mig::Layout> layouts = Layouts();
  ClusterBooks books({});
  auto set_node = [&](const mig::Layout& gpu0, const mig::Layout& gpu1) {
    books.SetNode("n", {{&A100(), gpu0}, {&A100(), gpu1}});
  };
  set_node(layouts[0], layouts[0]);
  for (int g = 0; g < 2; ++g) {
    books.SetPod("p" + std::to_string(g),
                 PodClaim{{"n", g}, "7g.80gb", 0, {"a", 8, 1, 100, 10}});
  }
  int version = books.gpus_version();
  EXPECT_DOUBLE_EQ(books.capacity().at("a"), 200);
  set_node(layouts[0], layouts[2]);
  EXPECT_EQ(books.gpus_version(), version);
  EXPECT_DOUBLE_EQ(books.capacity().at("a"), 100);
  ASSERT_EQ(books.state().gpus.size(), 2u);
  EXPECT_TRUE(books.state().gpus[0].slots[0].replica.has_value());
  EXPECT_EQ(books.state().gpus[1].layout(), layouts[2]);
  // Its pod now claims a slot that is gone; back to 7g, it counts again.
  set_node(layouts[0], layouts[0]);
  EXPECT_DOUBLE_EQ(books.capacity().at("a"), 200);
  set_node(layouts[0], layouts[0]);  // no change at all
  EXPECT_EQ(books.gpus_version(), version);
  // A GPU held by a claim not migserve's says so; its replicas count.
  books.SetNode(
      "n", {{&A100(), layouts[0], "team-a/theirs"}, {&A100(), layouts[0]}});
  EXPECT_EQ(books.state().gpus[0].held_by, "team-a/theirs");
  EXPECT_EQ(books.state().gpus[1].held_by, "");
  EXPECT_DOUBLE_EQ(books.capacity().at("a"), 200);
  set_node(layouts[0], layouts[0]);
  EXPECT_EQ(books.state().gpus[0].held_by, "");
  books.SetNode("n", {});  // nothing reported: no GPUs
  EXPECT_NE(books.gpus_version(), version);
  EXPECT_TRUE(books.capacity().empty());
  EXPECT_TRUE(books.state().gpus.empty());
}

}  // namespace
}  // namespace migserve::kubernetes
