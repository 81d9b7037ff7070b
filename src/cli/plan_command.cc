// migserve plan --from D1 --to D2 [--inventory I | --spare-gpus K]
//     [--format json|text] [-o F]
#include <fmt/format.h>

#include <map>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/transition_inputs.h"
#include "cluster/plan_json.h"
#include "cluster/plan_text.h"

namespace migserve::cli {
namespace {

struct PlanFlags {
  TransitionFlags transition;
  std::string output;
  std::string format = "json";
};

Status RunPlan(const PlanFlags& flags, CommandContext* context) {
  auto in = LoadTransition(flags.transition);
  if (!in.ok()) {
    return in.status();
  }
  auto planned = controller::PlanSurvivingIfPossible(in->current, in->to,
                                                     in->goal, in->planner);
  if (!planned.ok()) {
    return planned.status();
  }
  const cluster::TransitionPlan* plan = &planned->plan;
  controller::SafetyReport report =
      controller::CheckPlan(in->current, *plan, planned->goal);
  if (!report.ok()) {
    for (const std::string& p : report.problems) {
      context->err << "migserve: unsafe plan: " << p << "\n";
    }
    return Status::FailedPrecondition(
        "refusing to print an unsafe plan (a planner defect; please report)");
  }
  if (planned->survive_dropped.dropped()) {
    context->err << "plan: warning: " << planned->survive_dropped.Sentence()
                 << "\n";
  }
  std::map<std::string_view, int> counts;
  for (const cluster::Action& a : plan->actions) ++counts[KindName(a.kind)];
  context->err << fmt::format(
      "plan: {} actions ({} create, {} delete, {} migrate, {} repartition), "
      "safe in every order{}\n",
      plan->actions.size(), counts["create"], counts["delete"],
      counts["migrate"], counts["repartition"],
      planned->goal.survive ? fmt::format(" and after losing any one {}",
                                          workload::FailureDomainName(
                                              planned->goal.survive->domain))
                            : "");
  MIGSERVE_RETURN_IF_ERROR(context->Emit(
      flags.output, flags.format == "text" ? cluster::FormatPlanText(*plan)
                                           : cluster::FormatPlan(*plan)));
  return Status::Ok();
}

}  // namespace

void SetupPlan(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<PlanFlags>();
  AddTransitionOptions(app, &flags->transition);
  app->add_option("-o,--output", flags->output,
                  "Write the plan here (default: stdout)");
  app->add_option("--format", flags->format,
                  "json (DESIGN 6, for tools) or text (stages, for people)")
      ->capture_default_str()
      ->check(OneOf({"json", "text"}));
  OnRun(app, context, [flags, context] { return RunPlan(*flags, context); });
}

}  // namespace migserve::cli
