// The autoscaler's options for a test that runs its rounds at chosen
// moments: a 3-second window of 1-second steps, no trend, moves solved
// within seconds.
#ifndef MIGSERVE_AUTOSCALE_TESTING_QUICK_LOOP_H_
#define MIGSERVE_AUTOSCALE_TESTING_QUICK_LOOP_H_

#include <string>
#include <vector>

#include "autoscale/autoscaler.h"

namespace migserve::autoscale {

// The loop on the Prometheus at `url`, moving the target file `target`,
// keeping its events ("Reason: message") in `events` (not owned; it
// outlives the options).
AutoscaleOptions QuickLoop(const std::string& url, const std::string& target,
                           std::vector<std::string>* events);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_TESTING_QUICK_LOOP_H_
