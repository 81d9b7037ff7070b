#include "kube/event_recorder.h"

#include "kube/micro_time.h"

namespace migserve::kube {

EventRecorder::EventRecorder(KubeClient* client, nlohmann::json involved,
                             std::string component)
    : client_(client),
      namespace_(involved.value("namespace", "")),
      involved_(std::move(involved)),
      component_(std::move(component)) {
  if (namespace_.empty()) namespace_ = "default";
}

Status EventRecorder::Record(EventType type, const std::string& reason,
                             const std::string& message) {
  std::string now = MicroTimeNow();
  nlohmann::json event = {{"apiVersion", "v1"},
                          {"kind", "Event"},
                          {"metadata",
                           {{"generateName", involved_.value("name", "") + "."},
                            {"namespace", namespace_}}},
                          {"involvedObject", involved_},
                          {"type", EventTypeName(type)},
                          {"reason", reason},
                          {"message", message},
                          {"source", {{"component", component_}}},
                          {"firstTimestamp", now},
                          {"lastTimestamp", now},
                          {"count", 1}};
  return client_->Create("/api/v1/namespaces/" + namespace_ + "/events", event)
      .status();
}

EventSink EventRecorder::Sink(LogSink log) {
  return [this, log = std::move(log)](EventType type, const std::string& reason,
                                      const std::string& message) {
    Status recorded = Record(type, reason, message);
    if (!recorded.ok() && log) {
      log(component_ + ": event " + reason +
          " not recorded: " + recorded.message());
    }
  };
}

}  // namespace migserve::kube
