#include "kubernetes/kubernetes_backend.h"

#include <fmt/format.h>

#include <random>

#include "boundary/checked_name.h"
#include "boundary/json_fields.h"
#include "cluster/apply.h"
#include "kube/labels.h"
#include "kube/pod_ready.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"

namespace migserve::kubernetes {
namespace {

// How long a created pod may be missing from the watch's cache before the
// API server is asked whether it is gone (Pending::ask_after).
constexpr auto kCacheSettle = std::chrono::seconds(2);

// 128 random bits in hex: a create's token (pod_ledger.h).
std::string NewToken() {
  std::random_device device;
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:08x}", device());
  return token;
}

std::string Uid(const nlohmann::json& pod) {
  return StringField(pod, "metadata", "uid").value_or("");
}

// Replica pods: migserve's, not the pods that hold a DRA driver's claims.
std::string ManagedSelector() {
  return kube::LabelSelector(ManagedLabels()).Lacks(kLabelInstance).Query();
}

}  // namespace

KubernetesBackend::KubernetesBackend(kube::KubeClient* client,
                                     BackendOptions options)
    : client_(client),
      options_(std::move(options)),
      partition_(options_.partition),
      pods_(client, PodsPath(), ManagedSelector(), options_.watch_s,
            [this] { Changed(); }),
      nodes_(
          client, "/api/v1/nodes",
          "labelSelector=" + kube::KubeClient::Escape(options_.node_selector),
          options_.watch_s, [this] { Changed(); }),
      books_([this](const std::string& message) { Warn(message); }) {
  if (partition_ != nullptr) partition_->OnChange([this] { Changed(); });
}

void KubernetesBackend::Changed() {
  {
    MutexLock lock(&changes_mu_);
    ++changes_;
  }
  changed_.notify_all();
}

bool KubernetesBackend::WaitForChange(long seen, double timeout_s) {
  MutexLock lock(&changes_mu_);
  auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(timeout_s));
  while (changes_ == seen && lock.WaitUntil(&changed_, until)) {
  }
  return changes_ != seen;
}

std::string KubernetesBackend::PodsPath() const {
  return fmt::format("/api/v1/namespaces/{}/pods", options_.namespace_);
}

void KubernetesBackend::Warn(const std::string& message) {
  if (warned_.insert(message).second && options_.warn) options_.warn(message);
}

StatusOr<ClusterState> KubernetesBackend::Observe() {
  MIGSERVE_RETURN_IF_ERROR(Sync());
  return books_.state();
}

std::optional<LiveView> KubernetesBackend::Live() {
  if (!Sync().ok()) return std::nullopt;
  return LiveView{&books_.state(), &books_.capacity(), books_.gpus_version()};
}

std::optional<PodClaim> KubernetesBackend::Claim(const std::string& name,
                                                 const nlohmann::json& pod) {
  if (!kube::PodReady(pod)) return std::nullopt;
  // Deleted here, though the watch has not brought it yet: going, not
  // counted, and no stranger.
  if (auto gone = deleted_.find(name);
      gone != deleted_.end() && gone->second == Uid(pod)) {
    return std::nullopt;
  }
  if (Status mine = Owned(name, pod); !mine.ok()) {
    Warn(mine.message() +
         "; not counted (docs/kubernetes.md, \"Adopting "
         "pods\")");
    return std::nullopt;
  }
  const nlohmann::json& meta = pod["metadata"];
  std::optional<std::string> node = StringField(meta, "labels", kLabelNode);
  std::optional<int> index = IntField(meta, "labels", kLabelGpu);
  std::optional<int> start = IntField(meta, "labels", kLabelStart);
  std::optional<std::string> profile =
      StringField(meta, "labels", kLabelProfile);
  std::optional<Replica> replica = ReplicaFromMetadata(meta);
  if (!node || !index || !start || !profile || !replica) {
    Warn(
        fmt::format("pod {}: its migserve labels or annotations are "
                    "missing or malformed; not counted",
                    name));
    return std::nullopt;
  }
  return PodClaim{{*node, *index}, *profile, *start, std::move(*replica)};
}

Status KubernetesBackend::HasDriver() const {
  if (partition_ != nullptr) return Status::Ok();
  return Status::FailedPrecondition(
      "the Kubernetes backend has no partition driver: say who partitions "
      "the GPUs (--partitioner)");
}

Status KubernetesBackend::Sync() {
  MIGSERVE_RETURN_IF_ERROR(HasDriver());
  MIGSERVE_RETURN_IF_ERROR(nodes_.Look());
  MIGSERVE_RETURN_IF_ERROR(pods_.Look());
  auto wake = [this](const std::map<std::string, std::set<int>>& waiters,
                     const std::string& name) {
    auto it = waiters.find(name);
    if (it != waiters.end())
      woken_.insert(it->second.begin(), it->second.end());
  };
  MIGSERVE_ASSIGN_OR_RETURN(std::set<std::string> moved, partition_->Sync());
  for (const auto& [name, node] : nodes_.TakeChanges()) {
    SetNode(name, node ? &*node : nullptr);
    wake(node_waiters_, name);
    moved.erase(name);
  }
  for (const std::string& name : moved) {
    std::optional<nlohmann::json> node = nodes_.Find(name);
    SetNode(name, node ? &*node : nullptr);
    wake(node_waiters_, name);
  }
  std::set<std::string> stale = std::move(stale_pods_);
  stale_pods_.clear();
  for (const auto& [name, pod] : pods_.TakeChanges()) {
    if (auto gone = deleted_.find(name);
        gone != deleted_.end() && pod && Uid(*pod) != gone->second) {
      deleted_.erase(gone);  // another pod under its name
    }
    books_.SetPod(name, pod ? Claim(name, *pod) : std::nullopt);
    wake(pod_waiters_, name);
    stale.erase(name);
  }
  for (const std::string& name : stale) {
    std::optional<nlohmann::json> pod = pods_.Find(name);
    books_.SetPod(name, pod ? Claim(name, *pod) : std::nullopt);
  }
  return Status::Ok();
}

void KubernetesBackend::SetNode(const std::string& name,
                                const nlohmann::json* node) {
  std::vector<GpuLayout> gpus;
  if (node != nullptr) {
    StatusOr<std::vector<GpuLayout>> read = partition_->Layouts(name, *node);
    if (read.ok()) {
      gpus = std::move(*read);
    } else {
      Warn(read.status().message() + "; the node is left out");
    }
  }
  books_.SetNode(name, std::move(gpus));
}

std::string KubernetesBackend::PodName(const InstanceRef& ref,
                                       const std::string& service) {
  return ReplicaName(service, ref.gpu.node, ref.gpu.index,
                     ref.model->profiles[ref.instance.profile],
                     ref.instance.start);
}

Status KubernetesBackend::CreatePod(const InstanceRef& ref,
                                    const Replica& replica) {
  std::string name = PodName(ref, replica.service);
  std::string model = replica.model;
  if (model.empty()) {
    auto known = options_.models.find(replica.service);
    model = known != options_.models.end() ? known->second : replica.service;
  }
  PodDevice device = partition_->ReplicaDevice(ref);
  Json container = ServerContainer(replica, model, {ref, true},
                                   options_.serving, device.resources);
  kube::Annotations annotations = ReplicaAnnotations(replica, options_.owner);
  // The create's token, recorded before the create (pod_ledger.h); a
  // create that was announced but never answered keeps its token.
  LedgerEntry entry;
  if (options_.ledger != nullptr) {
    MIGSERVE_RETURN_IF_ERROR(LoadLedger());
    auto known = ledger_->find(name);
    if (known != ledger_->end()) entry = known->second;
    if (entry.token.empty() || !entry.uid.empty()) entry.token = NewToken();
    MIGSERVE_RETURN_IF_ERROR(Record(name, entry));
    annotations.Set(kAnnotationCreation, entry.token);
  }
  MIGSERVE_ASSIGN_OR_RETURN(ObjectName pod_name, ObjectName::Parse(name));
  MIGSERVE_ASSIGN_OR_RETURN(kube::Labels labels, ReplicaLabels(replica, ref));
  Json metadata = {{"name", pod_name.str()}};
  metadata.update(
      PodMetadata(labels, annotations, options_.serving, replica.service));
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", std::move(metadata)},
      {"spec", PodSpec(ref.gpu.node, std::move(container), options_.serving,
                       replica.service, device.pod_fields)}};
  auto made = client_->Create(PodsPath(), nlohmann::json(pod));
  if (made.ok() && options_.ledger != nullptr) {
    return Record(name, {entry.token, Uid(*made)});
  }
  if (made.status().code() != Status::Code::kAborted) return made.status();
  // It exists: ours (a resumed create) is done; another's is not ours.
  MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json existing,
                            client_->Get(PodsPath() + "/" + name));
  return Owned(name, existing);
}

Status KubernetesBackend::DeletePod(const std::string& name,
                                    std::optional<nlohmann::json> seen) {
  std::optional<nlohmann::json> pod = seen ? std::move(seen) : pods_.Find(name);
  if (!pod) {
    auto got = client_->Get(PodsPath() + "/" + name);
    if (got.status().code() == Status::Code::kNotFound) return Status::Ok();
    MIGSERVE_RETURN_IF_ERROR(got.status());
    pod = std::move(*got);
  }
  MIGSERVE_RETURN_IF_ERROR(Owned(name, *pod));
  // That pod only: if another has taken its name since the cache saw it,
  // the API server refuses (409) instead of deleting the other.
  nlohmann::json options = nullptr;
  if (auto uid = StringField(*pod, "metadata", "uid")) {
    options = {{"preconditions", {{"uid", *uid}}}};
  }
  Status s = client_->Delete(PodsPath() + "/" + name, options);
  if (s.code() == Status::Code::kAborted) {
    return Status::FailedPrecondition(fmt::format(
        "pod {} was replaced since it was seen; not deleted", name));
  }
  if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
  if (std::string uid = Uid(*pod); !uid.empty()) deleted_[name] = uid;
  if (options_.ledger == nullptr) return Status::Ok();
  return Forget(name);
}

Status KubernetesBackend::Owned(const std::string& name,
                                const nlohmann::json& pod) {
  std::string owner = Annotation(pod, kAnnotationOwner);
  if (owner != options_.owner) {
    return Status::FailedPrecondition(fmt::format(
        "pod {} carries migserve's labels but {}, not {}", name,
        owner.empty() ? std::string("no ") + kAnnotationOwner + " annotation"
                      : fmt::format("is owned by '{}'", owner),
        options_.owner));
  }
  if (options_.ledger == nullptr) return Status::Ok();
  MIGSERVE_RETURN_IF_ERROR(LoadLedger());
  std::string uid = Uid(pod);
  auto known = ledger_->find(name);
  if (known != ledger_->end() && !uid.empty()) {
    const LedgerEntry& entry = known->second;
    if (entry.uid == uid) return Status::Ok();
    if (!entry.token.empty() &&
        Annotation(pod, kAnnotationCreation) == entry.token) {
      return Record(name, {entry.token, uid});
    }
  }
  return Status::FailedPrecondition(fmt::format(
      "pod {} is annotated {}={} but is not a pod this controller created "
      "(uid '{}' is not in its journal)",
      name, kAnnotationOwner, options_.owner, uid));
}

Status KubernetesBackend::LoadLedger() {
  if (ledger_) return Status::Ok();
  MIGSERVE_ASSIGN_OR_RETURN(ledger_, options_.ledger->Entries());
  return Status::Ok();
}

Status KubernetesBackend::Record(const std::string& name,
                                 const LedgerEntry& entry) {
  MIGSERVE_RETURN_IF_ERROR(options_.ledger->Put(name, entry));
  (*ledger_)[name] = entry;
  stale_pods_.insert(name);
  return Status::Ok();
}

Status KubernetesBackend::Forget(const std::string& name) {
  ledger_->erase(name);
  stale_pods_.insert(name);
  return options_.ledger->Erase(name);
}

StatusOr<std::vector<std::string>> KubernetesBackend::Adopt() {
  std::vector<std::string> adopted;
  if (options_.ledger == nullptr) return adopted;
  MIGSERVE_ASSIGN_OR_RETURN(kube::Informer::Objects pods, pods_.Get());
  for (const auto& [name, pod] : pods) {
    if (Annotation(pod, kAnnotationOwner) != options_.owner ||
        Owned(name, pod).ok()) {
      continue;
    }
    MIGSERVE_RETURN_IF_ERROR(Record(name, {"", Uid(pod)}));
    adopted.push_back(name);
  }
  return adopted;
}

Status KubernetesBackend::Start(const Action& action) {
  MIGSERVE_RETURN_IF_ERROR(HasDriver());
  Pending p{action,
            Clock::now() +
                std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(options_.action_timeout_s)),
            "", false};
  p.ask_after = Clock::now() + kCacheSettle;
  switch (action.kind) {
    case ActionKind::kCreate:
      MIGSERVE_RETURN_IF_ERROR(CreatePod(action.at, action.replica));
      break;
    case ActionKind::kDelete: {
      MIGSERVE_RETURN_IF_ERROR(Sync());
      // The pod the guard judges is the one deleted: the watch may see a
      // replacement under the same name before the delete is sent.
      const std::string name = PodName(action.at, action.replica.service);
      std::optional<nlohmann::json> seen = pods_.Find(name);
      MIGSERVE_RETURN_IF_ERROR(GuardRemoval(action));
      MIGSERVE_RETURN_IF_ERROR(DeletePod(name, std::move(seen)));
      break;
    }
    case ActionKind::kMigrate:
      MIGSERVE_RETURN_IF_ERROR(CreatePod(action.to, action.replica));
      break;
    case ActionKind::kRepartition:
      MIGSERVE_ASSIGN_OR_RETURN(
          p.ticket, partition_->Start(action.at.gpu, *action.at.model,
                                      {action.remove, action.add}));
      break;
  }
  const int id = action.id;
  Drop(id);
  for (const std::string& pod : PodsOf(action)) pod_waiters_[pod].insert(id);
  for (const std::string& node : NodesOf(action))
    node_waiters_[node].insert(id);
  deadlines_.emplace(p.deadline, id);
  woken_.insert(id);
  pending_.emplace(id, std::move(p));
  return Status::Ok();
}

Status KubernetesBackend::GuardRemoval(const Action& a) const {
  if (!guard_) return Status::Ok();
  // Removals written whose pods the books still count (the watch has not
  // brought their deletion yet).
  std::vector<const Action*> removing;
  for (const auto& [id, p] : pending_) {
    const Action& r = p.action;
    bool written = r.kind == ActionKind::kDelete ||
                   (r.kind == ActionKind::kMigrate && p.source_deleted);
    if (written && books_.state().FindServing(r.at.gpu, r.at.instance,
                                              r.replica.service) != nullptr) {
      removing.push_back(&r);
    }
  }
  return guard_(a, books_.state(), books_.capacity(), removing);
}

std::vector<std::string> KubernetesBackend::PodsOf(const Action& a) const {
  switch (a.kind) {
    case ActionKind::kCreate:
    case ActionKind::kDelete:
      return {PodName(a.at, a.replica.service)};
    case ActionKind::kMigrate:
      return {PodName(a.at, a.replica.service),
              PodName(a.to, a.replica.service)};
    case ActionKind::kRepartition:
      break;
  }
  return {};
}

std::vector<std::string> KubernetesBackend::NodesOf(const Action& a) const {
  switch (a.kind) {
    case ActionKind::kCreate:
    case ActionKind::kRepartition:
      return {a.at.gpu.node};
    case ActionKind::kMigrate:
      return {a.to.gpu.node};
    case ActionKind::kDelete:
      break;
  }
  return {};
}

}  // namespace migserve::kubernetes
