#include "kubernetes/testing/dra_scheduler.h"

#include <fmt/format.h>

#include <regex>

#include "dra/nvidia_devices.h"
#include "kubernetes/cluster_model.h"

namespace migserve::kubernetes {
namespace {

// Unordered, as the API server answers (kubernetes::Json keeps order).
using ClaimJson = nlohmann::json;

constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";

std::string Uuid(const std::string& node, int minor) {
  return fmt::format("GPU-{}-{}", node, minor);
}

ClaimJson Attribute(const std::string& value) { return {{"string", value}}; }

// The devices of GPU `minor` of `node` as the driver lists them.
ClaimJson GpuDevices(const mig::GpuModel& model, const std::string& node,
                     int minor) {
  ClaimJson devices = ClaimJson::array();
  devices.push_back({{"name", fmt::format("gpu-{}", minor)},
                     {"attributes",
                      {{"type", Attribute("gpu")},
                       {"uuid", Attribute(Uuid(node, minor))},
                       {"productName", Attribute(model.name)}}}});
  for (const dra::MigDevice& d : dra::DynamicMigDevices(model, minor)) {
    const mig::Profile& p = model.profiles[d.instance.profile];
    ClaimJson counters = ClaimJson::object();
    for (int s = d.instance.start; s < d.instance.start + p.memory_slices;
         ++s) {
      counters[fmt::format("memory-slice-{}", s)] = {{"value", "1"}};
    }
    devices.push_back(
        {{"name", d.name},
         {"attributes",
          {{"type", Attribute("mig")},
           {"profile", Attribute(p.name)},
           {"parentUUID", Attribute(Uuid(node, minor))}}},
         {"consumesCounters",
          ClaimJson::array(
              {{{"counterSet", fmt::format("gpu-{}-counter-set", minor)},
                {"counters", counters}}})}});
  }
  return devices;
}

// The namespace and name of the object at `path`
// (.../namespaces/<ns>/<resource>/<name>).
std::pair<std::string, std::string> NamespaceAndName(const std::string& path) {
  static const std::regex kPath(R"(/namespaces/([^/]+)/[^/]+/([^/]+)$)");
  std::smatch m;
  if (!std::regex_search(path, m, kPath)) return {"", ""};
  return {m[1], m[2]};
}

// The one device `claim` asks for on `node`, named `node_name`; an error
// says what in it the stand-in does not read.
StatusOr<dra::DeviceRequest> RequestOf(const ClaimJson& claim,
                                       const std::string& node_name,
                                       const dra::FirstFitNode& node) {
  const ClaimJson requests = claim.value("spec", ClaimJson::object())
                                 .value("devices", ClaimJson::object())
                                 .value("requests", ClaimJson::array());
  if (requests.size() != 1 || !requests[0].contains("exactly")) {
    return Status::InvalidArgument("want one request with exactly");
  }
  const ClaimJson& exactly = requests[0]["exactly"];
  if (exactly.value("deviceClassName", "") != dra::kMigDeviceClass ||
      exactly.value("count", 1) != 1) {
    return Status::InvalidArgument(
        fmt::format("want one device of class {}", dra::kMigDeviceClass));
  }
  static const std::regex kTerm(
      R"(^\s*device\.attributes\['gpu\.nvidia\.com'\]\.(profile|parentUUID) == '([^']*)'\s*$)");
  dra::DeviceRequest request{-1, -1};
  for (const ClaimJson& selector :
       exactly.value("selectors", ClaimJson::array())) {
    std::string cel = selector.value("cel", ClaimJson::object())
                          .value("expression", std::string());
    for (size_t from = 0; from <= cel.size();) {
      size_t to = cel.find("&&", from);
      std::string term = cel.substr(from, to - from);
      from = to == std::string::npos ? cel.size() + 1 : to + 2;
      std::smatch m;
      if (!std::regex_match(term, m, kTerm)) {
        return Status::InvalidArgument("selector term not understood: " + term);
      }
      if (m[1] == "profile") {
        request.profile = node.model().FindProfile(m[2].str());
        if (request.profile < 0) {
          return Status::NotFound("no device has profile " + m[2].str());
        }
        continue;
      }
      request.gpu = -1;
      for (int minor = 0; minor < node.gpus(); ++minor) {
        if (Uuid(node_name, minor) == m[2]) request.gpu = minor;
      }
      if (request.gpu < 0) {
        return Status::NotFound("no device on the node has parentUUID " +
                                m[2].str());
      }
    }
  }
  if (request.profile < 0) {
    return Status::InvalidArgument(
        "no profile selected (the stand-in allocates by profile)");
  }
  return request;
}

}  // namespace

DraScheduler::DraScheduler(
    kube::ApiServerStandIn* server,
    const std::map<std::string, std::pair<const mig::GpuModel*, int>>& gpus)
    : server_(server) {
  for (const auto& [node, spec] : gpus) {
    const auto& [model, count] = spec;
    {
      MutexLock lock(&mu_);
      nodes_.emplace(node, dra::FirstFitNode(*model, count));
    }
    for (int minor = 0; minor < count; ++minor) {
      std::string name =
          fmt::format("{}-{}-{}", node, dra::kAttributeDomain, minor);
      server_->Put(fmt::format("{}/{}", kSlices, name),
                   {{"apiVersion", "resource.k8s.io/v1"},
                    {"kind", "ResourceSlice"},
                    {"metadata", {{"name", name}}},
                    {"spec",
                     {{"driver", dra::kAttributeDomain},
                      {"nodeName", node},
                      {"pool",
                       {{"name", node},
                        {"generation", 1},
                        {"resourceSliceCount", count}}},
                      {"devices", GpuDevices(*model, node, minor)}}}});
    }
  }
  server_->AddObserver(
      [this](const std::string& type, const std::string& path,
             const ClaimJson& object) { OnChange(type, path, object); });
}

ClaimJson DraScheduler::Slices() const {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSliceList"},
          {"items", server_->List(kSlices)}};
}

std::vector<std::string> DraScheduler::Unschedulable() const {
  MutexLock lock(&mu_);
  return unschedulable_;
}

mig::Layout DraScheduler::Layout(const std::string& node, int minor) const {
  MutexLock lock(&mu_);
  auto at = nodes_.find(node);
  if (at == nodes_.end() || minor < 0 || minor >= at->second.gpus()) return {};
  return at->second.layout(minor);
}

void DraScheduler::OnChange(const std::string& type, const std::string& path,
                            const ClaimJson& object) {
  if (type == "DELETED" && path.find("/resourceclaims/") != std::string::npos) {
    MutexLock lock(&mu_);
    auto it = claimed_.find(path);
    if (it == claimed_.end()) return;
    nodes_.at(it->second.node).Release(it->second.allocation);
    claimed_.erase(it);
    return;
  }
  if (type != "ADDED" || path.find("/pods/") == std::string::npos) return;
  const ClaimJson spec = object.value("spec", ClaimJson::object());
  std::string node = spec.value("nodeName", "");
  if (node.empty()) {
    node = spec.value("nodeSelector", ClaimJson::object())
               .value("kubernetes.io/hostname", "");
  }
  auto [ns, pod] = NamespaceAndName(path);
  for (const ClaimJson& ref :
       spec.value("resourceClaims", ClaimJson::array())) {
    std::string claim =
        fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}",
                    ns, ref.value("resourceClaimName", ""));
    Status done = Allocate(claim, node);
    if (!done.ok()) {
      MutexLock lock(&mu_);
      unschedulable_.push_back(fmt::format("{}: {}", pod, done.message()));
    }
  }
}

Status DraScheduler::Allocate(const std::string& path,
                              const std::string& node) {
  MutexLock lock(&mu_);
  if (claimed_.count(path) > 0) return Status::Ok();  // shared
  std::optional<ClaimJson> claim = server_->Get(path);
  if (!claim) return Status::NotFound(path + ": no such claim");
  auto at = nodes_.find(node);
  if (at == nodes_.end()) {
    return Status::NotFound(fmt::format("node '{}' has no GPUs", node));
  }
  MIGSERVE_ASSIGN_OR_RETURN(dra::DeviceRequest request,
                            RequestOf(*claim, node, at->second));
  std::optional<dra::Allocation> got = at->second.Allocate(request);
  if (!got) {
    return Status::FailedPrecondition(
        fmt::format("{}: no free device fits on node {}", path, node));
  }
  claimed_[path] = {node, *got};
  std::string device =
      dra::MigDeviceName(at->second.model(), got->gpu, got->instance);
  server_->Update(path, [&](ClaimJson* object) {
    (*object)["status"]["allocation"]["devices"]["results"] =
        ClaimJson::array({{{"request", "mig"},
                           {"driver", dra::kAttributeDomain},
                           {"pool", node},
                           {"device", device}}});
  });
  return Status::Ok();
}

}  // namespace migserve::kubernetes
