// Where a component's lines for its operator go: the one seam for logs of
// the controller, the autoscaler, the proxy's control plane, the agent and
// the backends. A line has no newline and starts with the component's name
// ("controller: ...", "autoscale: ..."); the command that runs the
// component decides where lines end up (stderr today). An empty sink says
// nothing.
#ifndef MIGSERVE_UTIL_LOG_SINK_H_
#define MIGSERVE_UTIL_LOG_SINK_H_

#include <functional>
#include <string>

namespace migserve {

using LogSink = std::function<void(const std::string& line)>;

}  // namespace migserve

#endif  // MIGSERVE_UTIL_LOG_SINK_H_
