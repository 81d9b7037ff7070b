#include "kubernetes/partition/dra_driver.h"

#include <fmt/format.h>

#include <climits>

#include "boundary/json_fields.h"
#include "dra/nvidia_devices.h"
#include "kube/labels.h"
#include "kube/pod_ready.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/dra_objects.h"
#include "kubernetes/names.h"

namespace migserve::kubernetes {
namespace {

constexpr char kDriverSlices[] = "/apis/resource.k8s.io/v1/resourceslices";
constexpr char kPlanned[] = "planned";
constexpr char kHold[] = "hold";

std::string ClaimsPath(const std::string& ns) {
  return fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims",
                     ns);
}

std::string PodsPath(const std::string& ns) {
  return fmt::format("/api/v1/namespaces/{}/pods", ns);
}

// The controller's claims and their pods, planned and holding.
std::string InstanceSelector() {
  return kube::LabelSelector(ManagedLabels()).Has(kLabelInstance).Query();
}

// The device a claim is allocated, or "" while it is not.
std::string AllocatedDevice(const nlohmann::json& claim) {
  const nlohmann::json* results = AllocationResults(claim);
  if (results == nullptr || results->size() != 1) return "";
  return StringAt((*results)[0], "device").value_or("");
}

// The instance of GPU `minor` that device `name` is; nullopt if none is.
std::optional<mig::Instance> InstanceOf(const mig::GpuModel& model, int minor,
                                        const std::string& name) {
  for (const dra::MigDevice& d : dra::DynamicMigDevices(model, minor)) {
    if (d.name == name) return d.instance;
  }
  return std::nullopt;
}

// The GPU index a claim is labelled with.
std::optional<int> GpuOf(const nlohmann::json& object) {
  const nlohmann::json* meta = ObjectAt(object, "metadata");
  return meta == nullptr ? std::nullopt : IntField(*meta, "labels", kLabelGpu);
}

}  // namespace

DraDriver::DraDriver(kube::KubeClient* client, DraDriverOptions options)
    : client_(client),
      options_(std::move(options)),
      slices_(client, kDriverSlices,
              "fieldSelector=" + kube::KubeClient::Escape(fmt::format(
                                     "spec.driver={}", dra::kAttributeDomain)),
              options_.watch_s, [this] { Notify(); }),
      claims_(client, ClaimsPath(options_.namespace_), InstanceSelector(),
              options_.watch_s, [this] { Notify(); }),
      pods_(client, PodsPath(options_.namespace_), InstanceSelector(),
            options_.watch_s, [this] { Notify(); }),
      held_(
          client,
          [this](const std::string& namespace_, const std::string& name) {
            return namespace_ == options_.namespace_ &&
                   claim_objects_.count(name) > 0;
          },
          options_.held_recheck_s) {
  if (options_.catalog == nullptr) {
    options_.catalog = &mig::GpuCatalog::Default();
  }
}

void DraDriver::OnChange(std::function<void()> changed) {
  MutexLock lock(&mu_);
  changed_ = std::move(changed);
}

void DraDriver::Notify() {
  std::function<void()> changed;
  {
    MutexLock lock(&mu_);
    changed = changed_;
  }
  if (changed) changed();
}

std::string DraDriver::ClaimName(const InstanceRef& at) {
  return DnsLabel(fmt::format("mig-{}-{}-{}-{}", at.gpu.node, at.gpu.index,
                              at.model->profiles[at.instance.profile].name,
                              at.instance.start));
}

std::string DraDriver::StepName(const GpuId& gpu, const mig::GpuModel& model,
                                const dra::ClaimStep& step) {
  if (step.kind == dra::ClaimStep::Kind::kClaim) {
    return ClaimName({gpu, &model, step.at.instance});
  }
  return DnsLabel(fmt::format("hold-{}-{}-{}-{}", gpu.node, gpu.index,
                              model.profiles[step.at.instance.profile].name,
                              step.at.instance.start));
}

StatusOr<std::set<std::string>> DraDriver::Sync() {
  MIGSERVE_RETURN_IF_ERROR(slices_.Look());
  MIGSERVE_RETURN_IF_ERROR(claims_.Look());
  MIGSERVE_RETURN_IF_ERROR(pods_.Look());
  std::set<std::string> moved;
  // Where an object is now (`node`), or was when last seen if it is gone
  // (`node` empty); the node moved either way.
  auto at = [&](const std::string& key, const std::string& node) {
    std::string known = node;
    if (node.empty()) {
      auto seen = node_of_.find(key);
      if (seen != node_of_.end()) known = seen->second;
      node_of_.erase(key);
    } else {
      node_of_[key] = node;
    }
    moved.insert(known);
    return known;
  };
  kube::Informer::Changes slices = slices_.TakeChanges();
  for (const auto& [name, slice] : slices) {
    at("slice/" + name,
       slice ? StringField(*slice, "spec", "nodeName").value_or("") : "");
  }
  if (!slices.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(kube::Informer::Objects all, slices_.Get());
    std::vector<nlohmann::json> items;
    for (auto& [name, slice] : all) items.push_back(std::move(slice));
    StatusOr<SliceGpus> read = GpusOfSlices(items, "resourceslices");
    slices_read_ = read.status();
    if (read.ok()) gpus_ = std::move(*read);
  }
  for (const auto& [name, claim] : claims_.TakeChanges()) {
    std::string node =
        at("claim/" + name, claim ? Label(*claim, kLabelNode) : "");
    claims_by_node_[node].erase(name);
    claim_objects_.erase(name);
    if (!claim) continue;
    claims_by_node_[node].insert(name);
    claim_objects_[name] = *claim;
  }
  for (const auto& [name, pod] : pods_.TakeChanges()) {
    at("pod/" + name, pod ? Label(*pod, kLabelNode) : "");
  }
  MIGSERVE_RETURN_IF_ERROR(slices_read_);  // until the slices are mended
  moved.merge(held_.Recheck());
  moved.erase("");
  return moved;
}

StatusOr<std::vector<GpuLayout>> DraDriver::Layouts(
    const std::string& name, const nlohmann::json& node) const {
  (void)node;
  std::vector<GpuLayout> gpus;
  for (auto it = gpus_.lower_bound({name, INT_MIN});
       it != gpus_.end() && it->first.first == name; ++it) {
    if (it->first.second != static_cast<int>(gpus.size())) {
      return Status::InvalidArgument(fmt::format(
          "node {}: the ResourceSlices of {} list GPU minor {} after {} GPUs "
          "(want minors 0 to n-1)",
          name, dra::kAttributeDomain, it->first.second, gpus.size()));
    }
    StatusOr<const mig::GpuModel*> model =
        options_.catalog->Find(it->second.product);
    if (!model.ok()) {
      return Status::InvalidArgument(
          fmt::format("node {}: GPU {} ({}): {}", name, it->first.second,
                      it->second.uuid, model.status().message()));
    }
    gpus.push_back({*model, {}, held_.Holder({name, it->first.second})});
  }
  auto claims = claims_by_node_.find(name);
  if (claims == claims_by_node_.end()) return gpus;
  for (const std::string& claim : claims->second) {
    const nlohmann::json& object = claim_objects_.at(claim);
    std::string device = AllocatedDevice(object);
    if (device.empty()) continue;
    std::optional<int> minor = GpuOf(object);
    std::optional<mig::Instance> instance;
    if (minor && *minor >= 0 && *minor < static_cast<int>(gpus.size())) {
      instance = InstanceOf(*gpus[*minor].model, *minor, device);
    }
    if (!instance) {
      return Status::InvalidArgument(fmt::format(
          "node {}: claim {} is allocated device {}, no MIG device of its "
          "GPU {}",
          name, claim, device, minor ? std::to_string(*minor) : "(none)"));
    }
    gpus[*minor].layout.Add(*instance);
  }
  return gpus;
}

std::map<std::string, mig::Instance> DraDriver::Allocated(
    const GpuId& gpu, const mig::GpuModel& model) const {
  std::map<std::string, mig::Instance> held;
  auto claims = claims_by_node_.find(gpu.node);
  if (claims == claims_by_node_.end()) return held;
  for (const std::string& claim : claims->second) {
    const nlohmann::json& object = claim_objects_.at(claim);
    if (GpuOf(object) != gpu.index) {
      continue;
    }
    std::optional<mig::Instance> instance =
        InstanceOf(model, gpu.index, AllocatedDevice(object));
    if (instance) held[claim] = *instance;
  }
  return held;
}

Status DraDriver::DeleteClaim(const std::string& name) {
  for (const std::string& path :
       {PodsPath(options_.namespace_) + "/" + name,
        ClaimsPath(options_.namespace_) + "/" + name}) {
    Status s = client_->Delete(path);
    if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
  }
  return Status::Ok();
}

StatusOr<std::string> DraDriver::Start(const GpuId& gpu,
                                       const mig::GpuModel& model,
                                       const mig::Reconfiguration& change) {
  auto known = gpus_.find({gpu.node, gpu.index});
  if (known == gpus_.end()) {
    return Status::FailedPrecondition(
        fmt::format("no ResourceSlice of {} lists GPU {}",
                    dra::kAttributeDomain, gpu.ToString()));
  }
  for (const mig::Instance& i : change.remove) {
    MIGSERVE_RETURN_IF_ERROR(DeleteClaim(ClaimName({gpu, &model, i})));
  }
  // Holds a change left behind (a controller that died mid-change).
  auto claims = claims_by_node_.find(gpu.node);
  if (claims != claims_by_node_.end()) {
    for (const std::string& claim : claims->second) {
      const nlohmann::json& object = claim_objects_.at(claim);
      if (GpuOf(object) == gpu.index &&
          Label(object, kLabelInstance) == kHold) {
        MIGSERVE_RETURN_IF_ERROR(DeleteClaim(claim));
      }
    }
  }
  std::string ticket = fmt::format("dra-{}", ++tickets_);
  Change c;
  c.gpu = gpu;
  c.model = &model;
  c.uuid = known->second.uuid;
  c.change = change;
  changes_[ticket] = std::move(c);
  return ticket;
}

StatusOr<bool> DraDriver::Plan(Change* c) const {
  std::map<std::string, mig::Instance> held = Allocated(c->gpu, *c->model);
  for (const mig::Instance& i : c->change.remove) {
    if (claim_objects_.count(ClaimName({c->gpu, c->model, i})) > 0) {
      return false;
    }
  }
  dra::FirstFitNode alone(*c->model, 1);
  for (const auto& [claim, instance] : held) {
    const nlohmann::json& object = claim_objects_.at(claim);
    if (Label(object, kLabelInstance) == kHold) {
      return false;  // a hold left behind, being deleted
    }
    if (!alone.Take({0, instance})) {
      return Status::Internal(
          fmt::format("GPU {}: claim {}'s device overlaps another claim's",
                      c->gpu.ToString(), claim));
    }
  }
  // An instance whose claim is allocated already (a change started again)
  // is not claimed twice.
  std::vector<mig::Instance> add;
  for (const mig::Instance& i : c->change.add) {
    auto at = held.find(ClaimName({c->gpu, c->model, i}));
    if (at == held.end() || !(at->second == i)) add.push_back(i);
  }
  MIGSERVE_ASSIGN_OR_RETURN(c->steps, dra::ClaimInstances(&alone, 0, add));
  c->planned = true;
  return true;
}

Status DraDriver::Issue(const Change& c, const dra::ClaimStep& step) {
  std::string name = StepName(c.gpu, *c.model, step);
  if (step.kind == dra::ClaimStep::Kind::kRelease) return DeleteClaim(name);
  const mig::Profile& profile = c.model->profiles[step.at.instance.profile];
  MIGSERVE_ASSIGN_OR_RETURN(
      kube::Labels labels,
      SiteLabels(ManagedLabels(), c.gpu, profile, step.at.instance.start));
  MIGSERVE_ASSIGN_OR_RETURN(
      kube::LabelValue instance,
      kube::LabelValue::Parse(
          step.kind == dra::ClaimStep::Kind::kClaim ? kPlanned : kHold));
  labels.Set(kLabelInstance, std::move(instance));
  std::string device =
      dra::MigDeviceName(*c.model, c.gpu.index, step.at.instance);
  ServingSpec where;
  where.namespace_ = options_.namespace_;
  for (const auto& [path, object] :
       {std::pair{ClaimsPath(options_.namespace_),
                  DraClaim(name, labels, device, DraSelector(profile, c.uuid),
                           where)},
        std::pair{PodsPath(options_.namespace_),
                  HoldPod(name, labels, device, c.gpu.node, where)}}) {
    auto made = client_->Create(path, nlohmann::json(object));
    // Made already: by this change before a restart.
    if (!made.ok() && made.status().code() != Status::Code::kAborted) {
      return made.status();
    }
  }
  return Status::Ok();
}

StatusOr<bool> DraDriver::Ended(const Change& c,
                                const dra::ClaimStep& step) const {
  std::string name = StepName(c.gpu, *c.model, step);
  auto claim = claim_objects_.find(name);
  if (step.kind == dra::ClaimStep::Kind::kRelease) {
    return claim == claim_objects_.end();
  }
  if (claim == claim_objects_.end()) return false;
  std::string device = AllocatedDevice(claim->second);
  if (device.empty() ||
      device != dra::MigDeviceName(*c.model, c.gpu.index, step.at.instance)) {
    return false;
  }
  if (step.kind == dra::ClaimStep::Kind::kHold) return true;
  std::optional<nlohmann::json> pod = pods_.Find(name);
  return pod && kube::PodReady(*pod);
}

std::optional<DraDriver::Misplacement> DraDriver::Misplaced(
    const Change& c, const dra::ClaimStep& step) const {
  if (step.kind == dra::ClaimStep::Kind::kRelease) return std::nullopt;
  std::string name = StepName(c.gpu, *c.model, step);
  auto claim = claim_objects_.find(name);
  if (claim == claim_objects_.end()) return std::nullopt;
  std::string device = AllocatedDevice(claim->second);
  Misplacement m;
  m.planned = dra::MigDeviceName(*c.model, c.gpu.index, step.at.instance);
  if (device.empty() || device == m.planned) return std::nullopt;
  m.holder = held_.HolderOf(c.gpu.node, m.planned);
  if (m.holder.empty()) {
    m.why = fmt::format(
        "claim {} got device {}, planned {} (a claim migserve does not know "
        "of on GPU {}?)",
        name, device, m.planned, c.gpu.ToString());
  } else {
    m.why = fmt::format(
        "claim {} got device {}, planned {}, which claim {} holds on GPU {} "
        "(not migserve's: free it, or take the GPU out of the deployment)",
        name, device, m.planned, m.holder, c.gpu.ToString());
  }
  return m;
}

std::optional<Status> DraDriver::Undo(Change* c, const Misplacement& m) {
  const dra::ClaimStep& step = c->steps[c->next];
  if (Status s = DeleteClaim(StepName(c->gpu, *c->model, step)); !s.ok()) {
    return s;
  }
  c->issued = false;
  if (++c->undone >= options_.claim_attempts) {
    std::string given_up = fmt::format(
        "{}; undone, and given up after {} attempts", m.why, c->undone);
    if (!m.holder.empty()) {
      held_.Hold(c->gpu, m.planned, m.holder);
      given_up += fmt::format(
          "; GPU {} is left out of the plans while claim {} holds {}",
          c->gpu.ToString(), m.holder, m.planned);
    }
    if (options_.event) {
      options_.event(EventType::kWarning, "ClaimMisplaced", given_up);
    }
    return Status::Unavailable(given_up);
  }
  double wait_s = options_.retry_s * static_cast<double>(1 << (c->undone - 1));
  c->retry_at = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(wait_s));
  std::string retry =
      fmt::format("{}; undone, trying again in {:g} s (attempt {} of {})",
                  m.why, wait_s, c->undone + 1, options_.claim_attempts);
  if (options_.progress) options_.progress(retry);
  if (options_.event) {
    options_.event(EventType::kWarning, "ClaimMisplaced", retry);
  }
  return std::nullopt;
}

std::optional<Status> DraDriver::Advance(Change* c) {
  if (!c->planned) {
    StatusOr<bool> planned = Plan(c);
    if (!planned.ok()) return std::optional<Status>(planned.status());
    if (!*planned) return std::optional<Status>();
  }
  while (c->next < c->steps.size()) {
    const dra::ClaimStep& step = c->steps[c->next];
    if (!c->issued) {
      // An undone claim is made again once it is gone and its wait is over.
      if (c->undone > 0 &&
          (std::chrono::steady_clock::now() < c->retry_at ||
           claim_objects_.count(StepName(c->gpu, *c->model, step)) > 0)) {
        return std::optional<Status>();
      }
      if (Status s = Issue(*c, step); !s.ok()) return std::optional<Status>(s);
      c->issued = true;
    }
    if (std::optional<Misplacement> m = Misplaced(*c, step)) {
      return Undo(c, *m);
    }
    StatusOr<bool> ended = Ended(*c, step);
    if (!ended.ok()) return std::optional<Status>(ended.status());
    if (!*ended) return std::optional<Status>();
    ++c->next;
    c->issued = false;
    c->undone = 0;
  }
  return std::optional<Status>(Status::Ok());
}

StatusOr<std::optional<Status>> DraDriver::Check(const GpuId& gpu,
                                                 const std::string& ticket,
                                                 const nlohmann::json& node) {
  (void)node;
  auto it = changes_.find(ticket);
  if (it == changes_.end()) {
    return std::optional<Status>(Status::Unavailable(
        fmt::format("GPU {}: change {} is not one this driver started",
                    gpu.ToString(), ticket)));
  }
  std::optional<Status> done = Advance(&it->second);
  if (done) changes_.erase(it);
  return done;
}

PodDevice DraDriver::ReplicaDevice(const InstanceRef& at) const {
  return {{{"claims", Json::array({{{"name", "mig"}}})}},
          {{"resourceClaims",
            Json::array(
                {{{"name", "mig"}, {"resourceClaimName", ClaimName(at)}}})}}};
}

}  // namespace migserve::kubernetes
