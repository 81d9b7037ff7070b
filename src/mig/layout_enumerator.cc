#include "mig/layout_enumerator.h"

#include <map>

namespace migserve::mig {
namespace {

std::vector<Instance> Candidates(const GpuModel& model,
                                 const MigOptions& options) {
  std::vector<Instance> out;
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    if (!options.Enabled(model.profiles[p])) continue;
    for (int start : model.profiles[p].starts) {
      out.push_back({static_cast<int>(p), start});
    }
  }
  return out;
}

// Depth-first over candidate indexes in increasing order, so each set is
// visited once. An illegal set has no legal superset (every rule is
// monotone), which prunes the search.
void Extend(const GpuModel& model, const MigOptions& options,
            const std::vector<Instance>& candidates, size_t next,
            std::vector<Instance>* current, std::vector<Layout>* out) {
  for (size_t c = next; c < candidates.size(); ++c) {
    current->push_back(candidates[c]);
    Layout layout(*current);
    if (IsLegal(model, layout, options)) {
      out->push_back(layout);
      Extend(model, options, candidates, c + 1, current, out);
    }
    current->pop_back();
  }
}

}  // namespace

std::vector<Layout> LegalLayouts(const GpuModel& model,
                                 const MigOptions& options) {
  std::vector<Instance> candidates = Candidates(model, options);
  std::vector<Instance> current;
  std::vector<Layout> out;
  Extend(model, options, candidates, 0, &current, &out);
  return out;
}

std::vector<Layout> MaximalLayouts(const GpuModel& model,
                                   const MigOptions& options) {
  std::vector<Instance> candidates = Candidates(model, options);
  std::vector<Layout> out;
  for (const Layout& layout : LegalLayouts(model, options)) {
    bool maximal = true;
    for (const Instance& c : candidates) {
      if (layout.Contains(c)) continue;
      Layout bigger = layout;
      bigger.Add(c);
      if (IsLegal(model, bigger, options)) {
        maximal = false;
        break;
      }
    }
    if (maximal) out.push_back(layout);
  }
  return out;
}

std::vector<Multiset> DistinctMultisets(const GpuModel& model,
                                        const std::vector<Layout>& layouts,
                                        std::vector<Layout>* representative) {
  std::map<Multiset, size_t> seen;
  std::vector<Multiset> out;
  for (const Layout& layout : layouts) {
    Multiset m = layout.ProfileCounts(model);
    if (seen.emplace(m, out.size()).second) {
      out.push_back(m);
      if (representative != nullptr) representative->push_back(layout);
    }
  }
  return out;
}

}  // namespace migserve::mig
