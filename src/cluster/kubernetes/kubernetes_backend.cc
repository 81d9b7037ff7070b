#include "cluster/kubernetes/kubernetes_backend.h"

#include <fmt/format.h>
#include <unistd.h>

#include <thread>

#include "cluster/apply.h"
#include "cluster/kubernetes/mig_annotations.h"
#include "cluster/kubernetes/names.h"

namespace migserve::cluster::kubernetes {
namespace {

using Clock = std::chrono::steady_clock;

bool Ready(const nlohmann::json& pod) {
  if (pod["metadata"].contains("deletionTimestamp")) return false;
  auto status = pod.find("status");
  if (status == pod.end() || !status->contains("conditions")) return false;
  for (const auto& c : (*status)["conditions"]) {
    if (c.value("type", "") == "Ready" && c.value("status", "") == "True") {
      return true;
    }
  }
  return false;
}

bool Failed(const nlohmann::json& pod) {
  auto status = pod.find("status");
  return status != pod.end() && status->value("phase", "") == "Failed";
}

std::string Label(const nlohmann::json& object, const char* key) {
  const auto& labels = object["metadata"].value("labels", nlohmann::json());
  auto it = labels.find(key);
  return it != labels.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string ManagedSelector() {
  return "labelSelector=" +
         KubeClient::Escape(fmt::format("{}={}", kManagedBy, kManager));
}

}  // namespace

KubernetesBackend::KubernetesBackend(KubeClient* client,
                                     const mig::GpuModel& gpu,
                                     BackendOptions options)
    : client_(client), gpu_(gpu), options_(std::move(options)) {}

std::string KubernetesBackend::PodsPath() const {
  return fmt::format("/api/v1/namespaces/{}/pods", options_.namespace_);
}

StatusOr<ClusterState> KubernetesBackend::Observe() {
  MIGSERVE_ASSIGN_OR_RETURN(Snapshot now, Look());
  std::vector<std::pair<std::string, NodeLayouts>> layouts;  // by node name
  for (const auto& [name, node] : now.nodes) {
    std::string text = Annotation(node, kAnnotationLayouts);
    if (text.empty()) continue;  // its agent has not reported yet
    MIGSERVE_ASSIGN_OR_RETURN(
        NodeLayouts l, ParseLayouts(text, gpu_,
                                    fmt::format("node {} annotation {}", name,
                                                kAnnotationLayouts)));
    layouts.emplace_back(name, std::move(l));
  }
  ClusterState state;
  where_.clear();
  std::map<std::pair<std::string, int>, int> ids;
  for (const auto& [node, l] : layouts) {
    for (size_t i = 0; i < l.layouts.size(); ++i) {
      GpuState g;
      g.id = static_cast<int>(state.gpus.size());
      g.node = node;
      for (const mig::Instance& instance : l.layouts[i].instances()) {
        g.slots.push_back({instance, std::nullopt});
      }
      where_[g.id] = {node, static_cast<int>(i)};
      ids[{node, static_cast<int>(i)}] = g.id;
      state.gpus.push_back(std::move(g));
    }
  }
  for (const auto& [name, pod] : now.pods) {
    if (!Ready(pod)) continue;
    auto id = ids.find(
        {Label(pod, kLabelNode), std::atoi(Label(pod, kLabelGpu).c_str())});
    std::optional<Replica> replica = ReplicaFromMetadata(pod["metadata"]);
    int profile = gpu_.FindProfile(Label(pod, kLabelProfile));
    if (id == ids.end() || !replica || profile < 0) continue;
    Slot* slot =
        state.FindGpu(id->second)
            ->Find({profile, std::atoi(Label(pod, kLabelStart).c_str())});
    if (slot != nullptr) slot->replica = *replica;
  }
  return state;
}

StatusOr<KubernetesBackend::Where> KubernetesBackend::Locate(int gpu_id) const {
  auto it = where_.find(gpu_id);
  if (it == where_.end()) {
    return Status::FailedPrecondition(
        fmt::format("GPU {} is not in the observed cluster", gpu_id));
  }
  return it->second;
}

StatusOr<std::string> KubernetesBackend::PodName(
    const InstanceRef& ref, const std::string& service) const {
  MIGSERVE_ASSIGN_OR_RETURN(Where w, Locate(ref.gpu));
  return ReplicaName(service, w.node, w.index,
                     gpu_.profiles[ref.instance.profile], ref.instance.start);
}

Status KubernetesBackend::CreatePod(const InstanceRef& ref,
                                    const Replica& replica) {
  MIGSERVE_ASSIGN_OR_RETURN(Where w, Locate(ref.gpu));
  MIGSERVE_ASSIGN_OR_RETURN(std::string name, PodName(ref, replica.service));
  const mig::Profile& profile = gpu_.profiles[ref.instance.profile];
  auto model = options_.models.find(replica.service);
  Json container = ServerContainer(
      replica, model != options_.models.end() ? model->second : replica.service,
      options_.serving);
  container["resources"] = DevicePluginResources(profile);
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"labels", ReplicaLabels(replica.service, w.node, w.index,
                                         profile, ref.instance.start)},
                {"annotations", ReplicaAnnotations(replica)}}},
              {"spec", PodSpec(w.node, std::move(container))}};
  auto made = client_->Create(PodsPath(), nlohmann::json(pod));
  if (made.status().code() == Status::Code::kAborted) return Status::Ok();
  return made.status();
}

Status KubernetesBackend::DeletePod(const std::string& name) {
  Status s = client_->Delete(PodsPath() + "/" + name);
  return s.code() == Status::Code::kNotFound ? Status::Ok() : s;
}

Status KubernetesBackend::Start(const Action& action) {
  Pending p{action, Clock::now(), "", false};
  switch (action.kind) {
    case ActionKind::kCreate:
      MIGSERVE_RETURN_IF_ERROR(CreatePod(action.at, action.replica));
      break;
    case ActionKind::kDelete: {
      MIGSERVE_ASSIGN_OR_RETURN(std::string name,
                                PodName(action.at, action.replica.service));
      MIGSERVE_RETURN_IF_ERROR(DeletePod(name));
      break;
    }
    case ActionKind::kMigrate:
      MIGSERVE_RETURN_IF_ERROR(CreatePod(action.to, action.replica));
      break;
    case ActionKind::kRepartition: {
      MIGSERVE_ASSIGN_OR_RETURN(Where w, Locate(action.at.gpu));
      p.nonce = fmt::format("{}-{}-{}", getpid(),
                            Clock::now().time_since_epoch().count(), ++nonce_);
      MigRequest request{p.nonce, {action.remove, action.add}};
      nlohmann::json patch = {
          {"metadata",
           {{"annotations",
             {{RequestKey(w.index), FormatRequest(request, gpu_)}}}}}};
      MIGSERVE_RETURN_IF_ERROR(
          client_->Patch("/api/v1/nodes/" + w.node, patch).status());
      break;
    }
  }
  pending_.push_back(std::move(p));
  return Status::Ok();
}

std::vector<int> KubernetesBackend::Running() const {
  std::vector<int> ids;
  for (const Pending& p : pending_) ids.push_back(p.action.id);
  return ids;
}

StatusOr<KubernetesBackend::Snapshot> KubernetesBackend::Look() {
  Snapshot now;
  MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json pods,
                            client_->List(PodsPath(), ManagedSelector()));
  for (auto& pod : pods["items"]) now.pods[pod["metadata"]["name"]] = pod;
  MIGSERVE_ASSIGN_OR_RETURN(
      nlohmann::json nodes,
      client_->List(
          "/api/v1/nodes",
          "labelSelector=" + KubeClient::Escape(options_.node_selector)));
  for (auto& node : nodes["items"]) now.nodes[node["metadata"]["name"]] = node;
  return now;
}

StatusOr<std::optional<Status>> KubernetesBackend::Poll(Pending* p,
                                                        const Snapshot& now) {
  const Action& a = p->action;
  std::string what = Describe(gpu_, a);
  if (std::chrono::duration<double>(Clock::now() - p->started).count() >
      options_.action_timeout_s) {
    return std::optional<Status>(Status::DeadlineExceeded(fmt::format(
        "{}: not done after {} s", what, options_.action_timeout_s)));
  }
  auto pod_state = [&](const std::string& name) -> std::optional<Status> {
    auto it = now.pods.find(name);
    if (it == now.pods.end()) {
      return Status::Unavailable(fmt::format("{}: pod {} is gone", what, name));
    }
    if (Failed(it->second)) {
      return Status::Unavailable(fmt::format("{}: pod {} failed", what, name));
    }
    if (Ready(it->second)) return Status::Ok();
    return std::nullopt;
  };
  switch (a.kind) {
    case ActionKind::kCreate: {
      MIGSERVE_ASSIGN_OR_RETURN(std::string name,
                                PodName(a.at, a.replica.service));
      return pod_state(name);
    }
    case ActionKind::kDelete: {
      MIGSERVE_ASSIGN_OR_RETURN(std::string name,
                                PodName(a.at, a.replica.service));
      if (now.pods.count(name) == 0) return std::optional<Status>(Status::Ok());
      return std::optional<Status>();
    }
    case ActionKind::kMigrate: {
      MIGSERVE_ASSIGN_OR_RETURN(std::string source,
                                PodName(a.at, a.replica.service));
      if (!p->source_deleted) {
        MIGSERVE_ASSIGN_OR_RETURN(std::string dest,
                                  PodName(a.to, a.replica.service));
        std::optional<Status> dest_state = pod_state(dest);
        if (!dest_state || !dest_state->ok()) return dest_state;
        MIGSERVE_RETURN_IF_ERROR(DeletePod(source));
        p->source_deleted = true;
      }
      if (now.pods.count(source) == 0)
        return std::optional<Status>(Status::Ok());
      return std::optional<Status>();
    }
    case ActionKind::kRepartition: {
      MIGSERVE_ASSIGN_OR_RETURN(Where w, Locate(a.at.gpu));
      auto node = now.nodes.find(w.node);
      if (node == now.nodes.end()) {
        return std::optional<Status>(Status::Unavailable(
            fmt::format("{}: node {} is gone", what, w.node)));
      }
      std::string text = Annotation(node->second, StatusKey(w.index));
      if (text.empty()) return std::optional<Status>();
      MIGSERVE_ASSIGN_OR_RETURN(MigStatus status,
                                ParseStatus(text, "node " + w.node));
      if (status.nonce != p->nonce) return std::optional<Status>();
      if (status.ok) return std::optional<Status>(Status::Ok());
      return std::optional<Status>(Status::Unavailable(fmt::format(
          "{}: the agent on {} says: {}", what, w.node, status.error)));
    }
  }
  return std::optional<Status>();
}

StatusOr<ActionResult> KubernetesBackend::WaitAny() {
  if (pending_.empty()) {
    return Status::FailedPrecondition("no action is running");
  }
  for (;;) {
    MIGSERVE_ASSIGN_OR_RETURN(Snapshot now, Look());
    for (size_t i = 0; i < pending_.size(); ++i) {
      MIGSERVE_ASSIGN_OR_RETURN(std::optional<Status> outcome,
                                Poll(&pending_[i], now));
      if (!outcome) continue;
      ActionResult result{pending_[i].action.id, *outcome};
      pending_.erase(pending_.begin() + static_cast<long>(i));
      return result;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(options_.poll_s));
  }
}

}  // namespace migserve::cluster::kubernetes
