#include "autoscale/testing/quick_loop.h"

namespace migserve::autoscale {

AutoscaleOptions QuickLoop(const std::string& url, const std::string& target,
                           std::vector<std::string>* events) {
  AutoscaleOptions options;
  options.prometheus = url;
  options.target = FileTarget(target);
  options.sizer.solve.time_limit_s = 10;
  options.sizer.move_time_limit_s = 5;
  options.policy.window_s = 3;
  options.policy.trend_s = 0;
  options.observe.step_s = 1;
  options.event = [events](EventType, const std::string& reason,
                           const std::string& message) {
    events->push_back(reason + ": " + message);
  };
  return options;
}

}  // namespace migserve::autoscale
