// What a component tells its operator happened, as Kubernetes Events say it
// (core/v1 Event `type`): one seam for the controller, the autoscaler and
// whatever records or prints their events (kube/event_recorder.h records
// them as Kubernetes Events).
#ifndef MIGSERVE_UTIL_EVENT_H_
#define MIGSERVE_UTIL_EVENT_H_

#include <functional>
#include <string>
#include <string_view>

namespace migserve {

enum class EventType {
  kNormal,   // a decision or a change, as it should be
  kWarning,  // something an operator should look at
};

// "Normal" or "Warning", as Kubernetes spells them.
constexpr std::string_view EventTypeName(EventType type) {
  return type == EventType::kWarning ? "Warning" : "Normal";
}

// Hears an event: its type, its reason (one CamelCase word, e.g.
// "ScaledUp") and its message.
using EventSink = std::function<void(EventType type, const std::string& reason,
                                     const std::string& message)>;

}  // namespace migserve

#endif  // MIGSERVE_UTIL_EVENT_H_
