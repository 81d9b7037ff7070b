// The node agent (`migserve agent`, one per GPU node as a DaemonSet): reports
// its GPUs' MIG layouts in its Node's annotation and carries out the
// controller's repartition requests with the MigDriver (mig_annotations.h
// has the protocol). After a change it restarts the node's NVIDIA device
// plugin pod, which only discovers MIG devices when it starts.
#ifndef MIGSERVE_AGENT_NODE_AGENT_H_
#define MIGSERVE_AGENT_NODE_AGENT_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "agent/mig_driver.h"
#include "kube/kube_client.h"
#include "kubernetes/partition/mig_annotations.h"
#include "util/event.h"
#include "util/log_sink.h"

namespace migserve::agent {

struct NodeAgentOptions {
  std::string node;
  std::string device_plugin_namespace = "gpu-operator";
  std::string device_plugin_selector = "app=nvidia-device-plugin-daemonset";
  int watch_s = 30;
  LogSink log;  // may be empty
  // Hears what `kubectl describe node` should show: Repartitioned
  // (Normal), RepartitionFailed and RequestRefused (Warning). May be empty.
  EventSink event;
};

class NodeAgent {
 public:
  // `client` and `driver` are not owned and outlive the agent.
  NodeAgent(kube::KubeClient* client, MigDriver* driver,
            NodeAgentOptions options);

  // Writes every GPU's live layout to the node's annotation.
  Status Report();
  // Carries out the requests of `node` (the Node object) not yet answered,
  // answering each in its status annotation.
  Status Handle(const nlohmann::json& node);
  // Reports, then handles requests as the Node changes, until `stop`.
  Status Run(const std::atomic<bool>& stop);

 private:
  // The status to write for GPU `index`'s request as parsed, given the
  // status it has; nullopt when that already answers it. A request that
  // does not parse (a nonce that is not a string, a start that is not a
  // slice) is refused with a status naming the field, never carried out;
  // so is one of a Lease epoch older than `newest`, the newest of the
  // node's requests and of those this agent has carried out since it
  // started (a replaced leader's: issue 91; a Lease deleted and made again
  // starts its epochs over: agents started since take them).
  std::optional<std::string> Answer(
      int index, const StatusOr<kubernetes::MigRequest>& parsed,
      const std::string& answered, long newest);
  // Applies one request; returns the status to report.
  kubernetes::MigStatus Carry(int index, const kubernetes::MigRequest& request);
  Status RestartDevicePlugin();
  StatusOr<std::string> Layouts();
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }
  void Event(EventType type, const std::string& reason,
             const std::string& message) const {
    if (options_.event) options_.event(type, reason, message);
  }

  kube::KubeClient* client_;
  MigDriver* driver_;
  NodeAgentOptions options_;
  long applied_epoch_ = 0;  // the newest epoch of a request carried out
};

}  // namespace migserve::agent

#endif  // MIGSERVE_AGENT_NODE_AGENT_H_
