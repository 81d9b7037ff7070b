// `migserve report`: one self-contained HTML file (inline SVG and CSS, no
// script, nothing fetched) showing a deployment and, when given, its
// comparison with other algorithms, the transition to it, and how it
// serves; or a day replayed through the autoscaling policy (docs/report.md).
#ifndef MIGSERVE_REPORT_HTML_REPORT_H_
#define MIGSERVE_REPORT_HTML_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "autoscale/replay.h"
#include "cluster/action.h"
#include "cluster/transition_report.h"
#include "deployment/deployment.h"
#include "report/report_inputs.h"
#include "serving/serve.h"

namespace migserve::report {

struct ServiceSupply {
  std::string name;
  double required = 0;  // requests/s
  double provided = 0;  // requests/s, from the profiles when known
};

struct ReportInput {
  std::string title;
  const deployment::Deployment* deployment = nullptr;  // or a replayed day
  const deployment::Deployment* before = nullptr;      // the transition's start
  std::vector<ServiceSupply> supply;
  std::optional<std::vector<ComparedRow>> compare;  // compare --format json
  std::optional<cluster::TransitionPlan> plan;
  std::optional<cluster::TransitionReport> simulation;  // simulate --report
  // serve --format json
  std::optional<std::vector<serving::ServiceServing>> serve;
  std::optional<autoscale::ReplayReport> replay;  // replay --format json
  std::optional<ObservedRates> rates;             // the replay's trace
  int compact_above = 100;                        // GPUs; see DeploymentView
};

// The HTML.
std::string RenderReport(const ReportInput& input);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_HTML_REPORT_H_
