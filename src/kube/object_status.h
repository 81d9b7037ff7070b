// What a controller reports through a custom resource's /status
// subresource, as Kubernetes' API conventions have it: conditions (type,
// status, reason, message, the generation they speak of, and when their
// status last changed) and a writer that sends a status only when it
// differs from the last one written, saying a failed write once.
#ifndef MIGSERVE_KUBE_OBJECT_STATUS_H_
#define MIGSERVE_KUBE_OBJECT_STATUS_H_

#include <nlohmann/json.hpp>
#include <string>

#include "kube/kube_client.h"
#include "util/log_sink.h"

namespace migserve::kube {

struct Condition {
  std::string type;  // one CamelCase word: Ready, Accepted...
  bool status = false;
  std::string reason;  // one CamelCase word
  std::string message;
};

// `c` as a status condition at `generation` for `now` (kube::TimeNow()),
// keeping the lastTransitionTime of the condition of its type in
// `previous` (the status last written, or null) where its status is
// unchanged.
nlohmann::json ConditionJson(const Condition& c, long long generation,
                             const nlohmann::json& previous,
                             const std::string& now);

// Writes statuses to one object's /status, each whole (a JSON patch that
// sets `status`: no field of an earlier writer's is left behind).
// Not thread-safe: one caller at a time.
class StatusWriter {
 public:
  // `client` is not owned and outlives the writer; `path` is the
  // object's; `log` hears a failed write (prefixed with `who`), once until
  // the error changes or a write succeeds.
  StatusWriter(KubeClient* client, std::string path, std::string who,
               LogSink log);

  // The status last written; null before the first.
  const nlohmann::json& last() const { return last_; }
  // Writes `status` unless it is the one last written; a failure is said
  // and the status tried again at the next Write.
  void Write(nlohmann::json status);

 private:
  KubeClient* client_;
  std::string path_;
  std::string who_;
  LogSink log_;
  nlohmann::json last_;
  std::string last_error_;
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_OBJECT_STATUS_H_
