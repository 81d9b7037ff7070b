#include "kube/object_status.h"

#include <utility>

namespace migserve::kube {

nlohmann::json ConditionJson(const Condition& c, long long generation,
                             const nlohmann::json& previous,
                             const std::string& now) {
  std::string status = c.status ? "True" : "False";
  std::string since = now;
  if (previous.is_object() && previous.contains("conditions") &&
      previous["conditions"].is_array()) {
    for (const nlohmann::json& p : previous["conditions"]) {
      if (p.value("type", "") == c.type && p.value("status", "") == status) {
        since = p.value("lastTransitionTime", now);
      }
    }
  }
  return {{"type", c.type},
          {"status", status},
          {"observedGeneration", generation},
          {"lastTransitionTime", since},
          {"reason", c.reason},
          {"message", c.message}};
}

StatusWriter::StatusWriter(KubeClient* client, std::string path,
                           std::string who, LogSink log)
    : client_(client),
      path_(std::move(path)),
      who_(std::move(who)),
      log_(std::move(log)) {}

void StatusWriter::Write(nlohmann::json status) {
  if (status == last_) return;
  // The whole status, as written: a merge patch would keep a field that
  // another run wrote and this one leaves out.
  nlohmann::json set = nlohmann::json::array();
  set.push_back({{"op", "add"}, {"path", "/status"}, {"value", status}});
  auto written = client_->JsonPatch(path_ + "/status", set);
  if (!written.ok()) {
    // Said once per error, not once a round.
    if (written.status().message() != last_error_) {
      log_(who_ + ": writing the status of " + path_ + ": " +
           written.status().message());
    }
    last_error_ = written.status().message();
    return;
  }
  last_error_.clear();
  last_ = std::move(status);
}

}  // namespace migserve::kube
