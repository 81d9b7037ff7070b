#include "cli/policy_flags.h"

namespace migserve::cli {

void AddPolicyOptions(CLI::App* app, autoscale::PolicyOptions* policy) {
  autoscale::PolicyOptions& p = *policy;
  app->add_option("--interval", p.interval_s, "Seconds between decisions")
      ->capture_default_str();
  app->add_option("--window", p.window_s,
                  "Seconds of observed rates each decision reads")
      ->capture_default_str();
  app->add_option("--quantile", p.quantile, "Quantile of the window's rates")
      ->capture_default_str();
  app->add_option("--up-step", p.up_step,
                  "An up move adds this share more than wanted")
      ->capture_default_str();
  app->add_option("--up-limit", p.up_limit,
                  "A move raises a service's required rate by at most this "
                  "share of it (0: no limit)")
      ->capture_default_str();
  app->add_option("--down-limit", p.down_limit,
                  "A move lowers a service's required rate by at most this "
                  "share of it (0: no limit)")
      ->capture_default_str();
  app->add_option("--trend", p.trend_s,
                  "Seconds ahead the window's upward trend is projected")
      ->capture_default_str();
  app->add_option("--headroom", p.headroom,
                  "Required rate = (quantile + trend) x (1 + headroom)")
      ->capture_default_str();
  app->add_option("--down-below", p.down_below,
                  "Move down only when wanted < this x required ...")
      ->capture_default_str();
  app->add_option("--cooldown", p.cooldown_s, "... for this many seconds")
      ->capture_default_str();
  app->add_option("--start-cost", p.start_cost_gpu_s,
                  "GPU-seconds a pod start costs, against a down move's "
                  "saving")
      ->capture_default_str();
}

}  // namespace migserve::cli
