#include "optimizer/solve_info.h"

namespace migserve::optimizer {
namespace {

nlohmann::json ToJson(const MilpInfo& m) {
  nlohmann::json j = {{"lp_bound", m.lp_bound},
                      {"cut_bound", m.cut_bound},
                      {"nodes", m.nodes},
                      {"incumbent", m.incumbent},
                      {"phase_seconds",
                       {{"seed", m.phase_seconds.seed},
                        {"model", m.phase_seconds.model},
                        {"root", m.phase_seconds.root},
                        {"incumbent", m.phase_seconds.incumbent},
                        {"search", m.phase_seconds.search}}}};
  if (m.best_bound) j["best_bound"] = *m.best_bound;
  if (m.gap) j["gap"] = *m.gap;
  if (m.cost) j["cost"] = *m.cost;
  if (m.cost_bound) j["cost_bound"] = *m.cost_bound;
  if (!m.gpus_by_type.empty()) j["gpus_by_type"] = m.gpus_by_type;
  return j;
}

}  // namespace

nlohmann::json ToJson(const SolveInfo& info) {
  if (info.milp) return ToJson(*info.milp);
  if (const std::optional<MctsInfo>& m = info.mcts) {
    return {{"iterations", m->iterations},
            {"nodes", m->nodes},
            {"rollouts", m->rollouts},
            {"pool_hits", m->pool_hits},
            {"pool_misses", m->pool_misses}};
  }
  if (const std::optional<GeneticInfo>& g = info.genetic) {
    return {{"fast_gpus", g->fast_gpus},
            {"rounds", g->rounds},
            {"stopped", g->stopped},
            {"threads", g->threads}};
  }
  if (info.parvagpu) {
    return {
        {"gpus_before_optimization", info.parvagpu->gpus_before_optimization}};
  }
  return nlohmann::json::object();
}

}  // namespace migserve::optimizer
