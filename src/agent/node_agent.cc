#include "agent/node_agent.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "boundary/json_fields.h"
#include "kube/labels.h"
#include "kubernetes/names.h"

namespace migserve::agent {

using kube::KubeClient;
using kubernetes::Annotation;
using kubernetes::FormatStatus;
using kubernetes::MigRequest;
using kubernetes::MigStatus;

NodeAgent::NodeAgent(kube::KubeClient* client, MigDriver* driver,
                     NodeAgentOptions options)
    : client_(client), driver_(driver), options_(std::move(options)) {}

StatusOr<std::string> NodeAgent::Layouts() {
  kubernetes::NodeLayouts layouts;
  for (int i = 0; i < driver_->gpu_count(); ++i) {
    MIGSERVE_ASSIGN_OR_RETURN(mig::Layout l, driver_->ReadLayout(i));
    layouts.gpus.push_back({&driver_->model(i), std::move(l)});
  }
  if (driver_->gpu_count() == 0) return Status::Unavailable("no GPUs");
  return kubernetes::FormatLayouts(layouts);
}

Status NodeAgent::Report() {
  MIGSERVE_ASSIGN_OR_RETURN(std::string layouts, Layouts());
  kube::Annotations notes;
  notes.Set(kubernetes::kAnnotationLayouts, std::move(layouts));
  return client_->Patch("/api/v1/nodes/" + options_.node, notes.Patch())
      .status();
}

Status NodeAgent::RestartDevicePlugin() {
  std::string path = fmt::format("/api/v1/namespaces/{}/pods",
                                 options_.device_plugin_namespace);
  MIGSERVE_ASSIGN_OR_RETURN(
      nlohmann::json pods,
      client_->List(
          path,
          "labelSelector=" +
              kube::KubeClient::Escape(options_.device_plugin_selector) +
              "&fieldSelector=" +
              kube::KubeClient::Escape("spec.nodeName=" + options_.node)));
  for (const auto& pod : pods["items"]) {
    std::string name = pod["metadata"]["name"];
    Status s = client_->Delete(path + "/" + name);
    if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
    Log(fmt::format("agent: restarted device plugin pod {}", name));
  }
  return Status::Ok();
}

MigStatus NodeAgent::Carry(int index, const MigRequest& request) {
  MigStatus status{request.nonce, true, ""};
  auto live = driver_->ReadLayout(index);
  if (!live.ok()) return {status.nonce, false, live.status().message()};
  const mig::Reconfiguration& change = request.change;
  bool done =
      std::none_of(change.remove.begin(), change.remove.end(),
                   [&](const mig::Instance& i) { return live->Contains(i); }) &&
      std::all_of(change.add.begin(), change.add.end(),
                  [&](const mig::Instance& i) { return live->Contains(i); });
  if (done) return status;  // a repeated request: nothing left to do
  Status applied = driver_->Apply(index, change);
  if (!applied.ok()) {
    Log("agent: " + applied.message());
    Event(EventType::kWarning, "RepartitionFailed",
          fmt::format("GPU {}: {}", index, applied.message()));
    return {status.nonce, false, applied.message()};
  }
  std::string done_text = fmt::format("GPU {}: -{} +{} instances", index,
                                      change.remove.size(), change.add.size());
  Log("agent: " + done_text);
  Event(EventType::kNormal, "Repartitioned", done_text);
  Status restarted = RestartDevicePlugin();
  if (!restarted.ok()) Log("agent: " + restarted.message());
  return status;
}

std::optional<std::string> NodeAgent::Answer(int index,
                                             const StatusOr<MigRequest>& parsed,
                                             const std::string& answered,
                                             long newest) {
  if (!parsed.ok()) {
    // Refused, not carried out: answered once (the same refusal again would
    // only patch the node to what it already says).
    std::string refusal = FormatStatus({"", false, parsed.status().message()});
    if (refusal == answered) return std::nullopt;
    Log("agent: refused " + parsed.status().message());
    Event(EventType::kWarning, "RequestRefused", parsed.status().message());
    return refusal;
  }
  auto last = kubernetes::ParseStatus(answered, "");
  if (last.ok() && last->nonce == parsed->nonce) return std::nullopt;
  // Epoch 0: a controller without leader election, which nothing fences.
  if (parsed->epoch > 0 && parsed->epoch < newest) {
    std::string why = fmt::format(
        "GPU {}: request {} is of lease epoch {}, older than epoch {} on this "
        "node: a replaced controller's; not carried out",
        index, parsed->nonce, parsed->epoch, newest);
    Log("agent: refused " + why);
    Event(EventType::kWarning, "RequestRefused", why);
    return FormatStatus({parsed->nonce, false, why, newest});
  }
  MigStatus status = Carry(index, *parsed);
  applied_epoch_ = std::max(applied_epoch_, parsed->epoch);
  status.epoch = applied_epoch_;
  return FormatStatus(status);
}

Status NodeAgent::Handle(const nlohmann::json& node) {
  // A Node deleted and registered again comes back without the layouts:
  // report them, or its GPUs stay unknown to the controller.
  if (Annotation(node, kubernetes::kAnnotationLayouts).empty()) {
    MIGSERVE_RETURN_IF_ERROR(Report());
  }
  // Each GPU's request, read once; a request older than any the node
  // shows (the successor's first write on another GPU, say) or than one
  // carried out is a replaced leader's.
  std::vector<std::optional<StatusOr<MigRequest>>> requests(
      driver_->gpu_count());
  long newest = applied_epoch_;
  for (int i = 0; i < driver_->gpu_count(); ++i) {
    std::string key = kubernetes::RequestKey(i);
    std::string text = Annotation(node, key);
    if (text.empty()) continue;
    requests[i] =
        kubernetes::ParseRequest(text, driver_->model(i), "annotation " + key);
    if (requests[i]->ok()) newest = std::max(newest, (*requests[i])->epoch);
  }
  kube::Annotations notes;
  for (int i = 0; i < driver_->gpu_count(); ++i) {
    if (!requests[i]) continue;
    std::optional<std::string> answer = Answer(
        i, *requests[i], Annotation(node, kubernetes::StatusKey(i)), newest);
    if (answer) notes.SetIndexed(kubernetes::kAnnotationMigStatus, i, *answer);
  }
  if (notes.empty()) return Status::Ok();
  MIGSERVE_ASSIGN_OR_RETURN(std::string layouts, Layouts());
  notes.Set(kubernetes::kAnnotationLayouts, std::move(layouts));
  return client_->Patch("/api/v1/nodes/" + options_.node, notes.Patch())
      .status();
}

Status NodeAgent::Run(const std::atomic<bool>& stop) {
  MIGSERVE_RETURN_IF_ERROR(Report());
  Log(fmt::format("agent: node {} with {} GPUs reported", options_.node,
                  driver_->gpu_count()));
  while (!stop) {
    auto node = client_->Get("/api/v1/nodes/" + options_.node);
    Status s = node.status();
    if (s.ok()) s = Handle(*node);
    if (s.ok()) {
      s = client_->Watch(
          "/api/v1/nodes",
          "fieldSelector=" +
              kube::KubeClient::Escape("metadata.name=" + options_.node),
          (*node)["metadata"]["resourceVersion"], options_.watch_s,
          [&](const nlohmann::json& event) {
            Status handled = Handle(event["object"]);
            if (!handled.ok()) Log("agent: " + handled.message());
            return !stop;
          },
          &stop);
    }
    if (!s.ok()) {
      Log("agent: " + s.message() + "; retrying in 1 s");
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  return Status::Ok();
}

}  // namespace migserve::agent
