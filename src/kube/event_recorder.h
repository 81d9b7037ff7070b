// Kubernetes Events (core/v1) about one object: what an operator sees in
// `kubectl get events` and `kubectl describe` of that object.
#ifndef MIGSERVE_KUBE_EVENT_RECORDER_H_
#define MIGSERVE_KUBE_EVENT_RECORDER_H_

#include <nlohmann/json.hpp>
#include <string>

#include "kube/kube_client.h"
#include "util/event.h"
#include "util/log_sink.h"
#include "util/status.h"

namespace migserve::kube {

class EventRecorder {
 public:
  // Events about `involved` (an ObjectReference: apiVersion, kind, name,
  // namespace), from `component`, in the namespace the API server takes
  // them in: the object's, or "default" for a cluster-scoped object (no
  // namespace). `client` is not owned and outlives the recorder.
  EventRecorder(KubeClient* client, nlohmann::json involved,
                std::string component);

  // Creates an Event of `type` with `reason` (one CamelCase word) and
  // `message`.
  Status Record(EventType type, const std::string& reason,
                const std::string& message);

  // An EventSink that records each event, and tells `log` (may be empty)
  // of one it could not record ("COMPONENT: event REASON not recorded:
  // why"): an event is never worth stopping for. The recorder outlives it.
  EventSink Sink(LogSink log);

 private:
  KubeClient* client_;
  std::string namespace_;
  nlohmann::json involved_;
  std::string component_;
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_EVENT_RECORDER_H_
