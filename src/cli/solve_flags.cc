// The flags of the optimizer's algorithms, shared by optimize and compare.
#include "boundary/number.h"
#include "cli/command.h"
#include "cli/flag_checks.h"

namespace migserve::cli {
namespace {

void AddGreedyOptions(CLI::App* app, optimizer::GreedyOptions* g) {
  app->add_flag("!--paper-score", g->score.cap_utility,
                "Score configs exactly as the paper, sum (1-c_i) u_i, without "
                "capping u_i at what service i still misses");
  app->add_flag("!--no-mix-more", g->mix_more,
                "Never mix an almost-satisfied service with more than one "
                "other");
  app->add_option("--almost-satisfied", g->almost_satisfied,
                  "A service is almost satisfied when it misses at most this "
                  "many of its own best GPUs")
      ->default_val(g->almost_satisfied)
      ->check(Positive());
}

void AddMctsOptions(CLI::App* app, optimizer::MctsOptions* m) {
  app->add_option("--mcts-top-k", m->top_k, "MCTS children per node")
      ->default_val(m->top_k)
      ->check(Positive());
  app->add_option("--mcts-services", m->sample_services,
                  "Unsatisfied services sampled per MCTS node")
      ->default_val(m->sample_services)
      ->check(Positive());
  app->add_option("--mcts-iterations", m->iterations,
                  "MCTS iterations per search")
      ->default_val(m->iterations)
      ->check(Positive());
}

void AddGeneticOptions(CLI::App* app, optimizer::GeneticOptions* ga) {
  app->add_option("--ga-population", ga->population, "GA deployments kept")
      ->default_val(ga->population)
      ->check(Positive());
  app->add_option("--ga-offspring", ga->offspring,
                  "GA children per deployment per round")
      ->default_val(ga->offspring)
      ->check(Positive());
  app->add_option("--ga-patience", ga->patience,
                  "Stop after this many GA rounds without improvement")
      ->default_val(ga->patience)
      ->check(Positive());
  app->add_option("--ga-max-rounds", ga->max_rounds,
                  "Stop after this many GA rounds (0: no limit)")
      ->default_val(ga->max_rounds)
      ->check(NonNegative());
  app->add_option("--ga-erase", ga->erase_fraction,
                  "Crossover erases 1 up to this share of the GPUs")
      ->default_val(ga->erase_fraction)
      ->check(Between(0.0, 1.0));
  app->add_option("--ga-slow", ga->slow,
                  "Slow algorithm that refills erased GPUs: mcts (paper) or "
                  "milp")
      ->default_val(ga->slow)
      ->check(OneOf({"mcts", "milp"}));
  app->add_flag("!--ga-no-prune", ga->prune,
                "Keep the GPUs a child no longer needs");
}

void AddMilpOptions(CLI::App* app, optimizer::MilpOptions* milp) {
  app->add_flag("--milp-greedy-seed", milp->greedy_seed,
                "MILP: seed CBC with the greedy's deployment (slow at fleet "
                "scale; by default the dives find the first deployment)");
  app->add_option("--milp-gap", milp->gap,
                  "MILP: stop once within this share of the proven bound "
                  "(status feasible); 0: prove optimality")
      ->default_val(milp->gap)
      ->check(Between(0.0, 1.0));
  app->add_option("--milp-cut-rounds", milp->cut_rounds,
                  "MILP: rounds of service cuts per LP")
      ->default_val(milp->cut_rounds)
      ->check(NonNegative());
  app->add_option("--milp-dives", milp->dives,
                  "MILP: dives for an incumbent (0: CBC alone)")
      ->default_val(milp->dives)
      ->check(NonNegative());
  app->add_option("--milp-dive-patience", milp->dive_patience,
                  "MILP: stop diving after this many dives in a row find "
                  "nothing better")
      ->default_val(milp->dive_patience)
      ->check(Positive());
  app->add_option("--milp-dive-free", milp->dive_free,
                  "MILP: services a dive leaves to CBC")
      ->default_val(milp->dive_free)
      ->check(NonNegative());
  app->add_flag("!--milp-no-tree-cuts", milp->tree_cuts,
                "MILP: CBC's standard solver only, no service cuts at nodes");
  app->add_flag("!--milp-no-spare", milp->spare,
                "MILP with survive: leave each service's spare to rounds of "
                "raised rates instead of pricing it in the model");
  app->add_option("--milp-nodes", milp->nodes,
                  "MILP: the work limit, CBC nodes a solve may spend (the "
                  "same inputs give the same deployment on any machine; "
                  "0: no limit but --time-limit)")
      ->default_val(milp->nodes)
      ->check(NonNegative());
}

}  // namespace

void AddSolveOptions(CLI::App* app, optimizer::SolveOptions* solve,
                     CommandContext* context) {
  app->add_option("--time-limit", solve->time_limit_s,
                  "Seconds a search may run, a safety net (milp ends by "
                  "--milp-nodes, mcts by its iterations, ga by its "
                  "patience): mcts, ga, two-phase, milp and --from keep the "
                  "best found; greedy stops with no deployment; parvagpu "
                  "ends its optimization step (status time_limit); the "
                  "baselines construct at once")
      ->default_val(solve->time_limit_s)
      ->check(Positive());
  app->add_option("--seed", solve->seed, "Random seed")
      ->default_val(solve->seed);
  app->add_option("--threads", solve->threads, "Worker threads (0: every core)")
      ->default_val(solve->threads)
      ->check(NonNegative());
  app->add_option("--max-gpus", solve->max_gpus,
                  "Refuse a workload whose lower bound needs more GPUs than "
                  "this (a mistyped throughput)")
      ->default_val(solve->max_gpus)
      ->check(Between(1, kMaxGpus));
  AddGreedyOptions(app, &solve->greedy);
  AddMctsOptions(app, &solve->mcts);
  AddGeneticOptions(app, &solve->genetic);
  AddMilpOptions(app, &solve->milp);
  solve->progress = [context](const std::string& line) {
    context->Progress(line);
  };
}

}  // namespace migserve::cli
