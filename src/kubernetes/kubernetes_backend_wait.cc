// KubernetesBackend's half that follows the actions it started to their
// end: each pending action polled against the watch's cache when
// something it waits on changes or its deadline comes, the first one done
// returned (kubernetes_backend.cc starts them).
#include <fmt/format.h>

#include "cluster/apply.h"
#include "kube/pod_ready.h"
#include "kubernetes/kubernetes_backend.h"

namespace migserve::kubernetes {

void KubernetesBackend::Drop(int id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  auto unwait = [id](std::map<std::string, std::set<int>>* waiters,
                     const std::string& name) {
    auto w = waiters->find(name);
    if (w == waiters->end()) return;
    w->second.erase(id);
    if (w->second.empty()) waiters->erase(w);
  };
  for (const std::string& pod : PodsOf(it->second.action)) {
    unwait(&pod_waiters_, pod);
  }
  for (const std::string& node : NodesOf(it->second.action)) {
    unwait(&node_waiters_, node);
  }
  deadlines_.erase({it->second.deadline, id});
  woken_.erase(id);
  pending_.erase(it);
}

std::vector<int> KubernetesBackend::Running() const {
  std::vector<int> ids;
  for (const auto& [id, p] : pending_) ids.push_back(id);
  return ids;
}

StatusOr<std::optional<Status>> KubernetesBackend::Poll(Pending* p) {
  const Action& a = p->action;
  std::string what = Describe(a);
  if (Clock::now() >= p->deadline) {
    return std::optional<Status>(Status::DeadlineExceeded(fmt::format(
        "{}: not done after {} s", what, options_.action_timeout_s)));
  }
  // The new pod of a create or migration: it never runs once its node is
  // gone (a lost node; the pod garbage collector deletes it).
  auto pod_state = [&](const InstanceRef& at) -> std::optional<Status> {
    if (!nodes_.Find(at.gpu.node)) {
      return Status::Unavailable(
          fmt::format("{}: node {} is gone", what, at.gpu.node));
    }
    std::string name = PodName(at, a.replica.service);
    std::optional<nlohmann::json> pod = pods_.Find(name);
    if (!pod) {
      if (p->seen) {
        return Status::Unavailable(
            fmt::format("{}: pod {} is gone", what, name));
      }
      // Not in the cache: the watch has not brought it yet, or it was
      // created, made Ready and deleted between two looks (issue 91: the
      // action then waited for its timeout). The create answered, so the
      // pod existed: past a settling time, the API server says which, once
      // a poll period.
      const Clock::time_point now = Clock::now();
      if (now < p->ask_after) return std::nullopt;
      p->ask_after = now + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(options_.poll_s));
      auto live = client_->Get(PodsPath() + "/" + name);
      if (live.status().code() == Status::Code::kNotFound) {
        return Status::Unavailable(fmt::format(
            "{}: pod {} is gone (deleted before the watch showed it)", what,
            name));
      }
      return std::nullopt;
    }
    p->seen = true;
    if (kube::PodFailed(*pod)) {
      return Status::Unavailable(fmt::format("{}: pod {} failed", what, name));
    }
    if (kube::PodReady(*pod)) return Status::Ok();
    return std::nullopt;
  };
  switch (a.kind) {
    case ActionKind::kCreate:
      return pod_state(a.at);
    case ActionKind::kDelete:
      if (!pods_.Find(PodName(a.at, a.replica.service))) {
        return std::optional<Status>(Status::Ok());
      }
      return std::optional<Status>();
    case ActionKind::kMigrate: {
      std::string source = PodName(a.at, a.replica.service);
      if (!p->source_deleted) {
        std::optional<Status> dest_state = pod_state(a.to);
        if (!dest_state || !dest_state->ok()) return dest_state;
        if (Status held = GuardRemoval(a); !held.ok()) {
          return std::optional<Status>(held.WithPrefix(what));
        }
        MIGSERVE_RETURN_IF_ERROR(DeletePod(source));
        p->source_deleted = true;
      }
      if (!pods_.Find(source)) return std::optional<Status>(Status::Ok());
      return std::optional<Status>();
    }
    case ActionKind::kRepartition: {
      const GpuId& w = a.at.gpu;
      std::optional<nlohmann::json> node = nodes_.Find(w.node);
      if (!node) {
        return std::optional<Status>(Status::Unavailable(
            fmt::format("{}: node {} is gone", what, w.node)));
      }
      MIGSERVE_ASSIGN_OR_RETURN(std::optional<Status> done,
                                partition_->Check(w, p->ticket, *node));
      if (done && !done->ok()) done = done->WithPrefix(what);
      return done;
    }
  }
  return std::optional<Status>();
}

StatusOr<ActionResult> KubernetesBackend::WaitAny() {
  if (pending_.empty()) {
    return Status::FailedPrecondition("no action is running");
  }
  for (;;) {
    // A leader that can no longer prove its Lease stops waiting as it
    // stops writing: within a poll of its fence failing, whatever it waits
    // on (its requests to the agent may be a successor's by now).
    MIGSERVE_RETURN_IF_ERROR(client_->CheckFence());
    long seen;
    {
      MutexLock lock(&changes_mu_);
      seen = changes_;
    }
    MIGSERVE_RETURN_IF_ERROR(Sync());
    const Clock::time_point now = Clock::now();
    for (auto d = deadlines_.begin(); d != deadlines_.end() && d->first <= now;
         ++d) {
      woken_.insert(d->second);
    }
    while (!woken_.empty()) {
      const int id = *woken_.begin();
      auto p = pending_.find(id);
      if (p == pending_.end()) {
        woken_.erase(woken_.begin());
        continue;
      }
      StatusOr<std::optional<Status>> outcome = Poll(&p->second);
      if (!outcome.ok()) return outcome.status();  // polled again next time
      woken_.erase(woken_.begin());
      if (!*outcome) continue;
      ActionResult result{id, **outcome};
      Drop(id);
      return result;
    }
    double wait_s = options_.poll_s;
    if (!deadlines_.empty()) {
      wait_s = std::min(wait_s, std::chrono::duration<double>(
                                    deadlines_.begin()->first - Clock::now())
                                    .count());
    }
    // A quiet spell polls every action, whatever a watch may have missed.
    if (!WaitForChange(seen, std::max(wait_s, 0.0))) {
      for (const auto& [id, p] : pending_) woken_.insert(id);
    }
  }
}

}  // namespace migserve::kubernetes
