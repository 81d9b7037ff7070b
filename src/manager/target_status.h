// What the controller reports through its ServingTarget's status
// (deploy/base/crd.yaml), as the GPU Operator's ClusterPolicy and KServe's
// InferenceService report theirs: the conditions Ready, Progressing and
// Degraded with reasons, the generation acted on, the stage, the actions
// done and failed, the GPUs held and the services at their target rates;
// so that `kubectl get servingtargets` and `kubectl wait
// --for=condition=Ready` follow a transition.
#ifndef MIGSERVE_MANAGER_TARGET_STATUS_H_
#define MIGSERVE_MANAGER_TARGET_STATUS_H_

#include <condition_variable>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "kube/kube_client.h"
#include "kube/object_status.h"
#include "util/log_sink.h"
#include "util/mutex.h"

namespace migserve::manager {

// What the status is made of, read while the loop runs.
struct TargetProgress {
  nlohmann::json progress;  // controller::Reconciler::Progress()
  long generation = 0;      // of the target being acted on
  bool reached = false;     // a pass ended at that generation's target
};

// The status for `now`: conditions whose state did not change keep their
// lastTransitionTime from `previous` (the status last written, or null).
// Ready is True only once a pass ended at the target of `generation` with
// the cluster holding all of it (not degraded) and no pass running.
nlohmann::json TargetStatusOf(const TargetProgress& at,
                              const nlohmann::json& previous,
                              const std::string& now);

// Writes the status of one ServingTarget through its /status subresource:
// on Report, and every period while started; a status equal to the last
// written is not sent again. A failed write is logged and tried at the
// next report (the controller's fence stops a controller that lost its
// lease from writing).
class TargetStatusReporter {
 public:
  // `client` is not owned and outlives the reporter; `path` is the
  // ServingTarget's.
  TargetStatusReporter(kube::KubeClient* client, std::string path,
                       std::function<TargetProgress()> progress, LogSink log);
  ~TargetStatusReporter();
  TargetStatusReporter(const TargetStatusReporter&) = delete;
  TargetStatusReporter& operator=(const TargetStatusReporter&) = delete;

  // Reports every `period_s` on a thread of its own until destroyed.
  void Start(double period_s);
  // Reports now.
  void Report();

 private:
  std::function<TargetProgress()> progress_;
  Mutex mu_;  // one report at a time
  kube::StatusWriter writer_ GUARDED_BY(mu_);
  std::condition_variable stop_cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace migserve::manager

#endif  // MIGSERVE_MANAGER_TARGET_STATUS_H_
