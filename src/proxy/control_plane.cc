#include "proxy/control_plane.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "boundary/json_fields.h"
#include "kube/labels.h"
#include "kube/pod_ready.h"
#include "kubernetes/names.h"
#include "kubernetes/replica_pod.h"
#include "kubernetes/routing/proxy_routes.h"
#include "kubernetes/serving_spec.h"
#include "util/prometheus_text.h"

namespace migserve::proxy {
namespace {

namespace k8s = kubernetes;
using json = nlohmann::json;

// The requests a replica of a language model's `group` takes at once
// where the proxy keeps conversations on replicas: its batch.
long MaxConnsOf(const cluster::RouteGroup& group) {
  return std::clamp<long>(group.batch, 0, kMaxBackendConns);
}

}  // namespace

std::string DeploymentOf(const json& metadata) {
  std::optional<std::string> hash =
      StringField(metadata, "labels", "pod-template-hash");
  if (!hash || hash->empty() || !metadata.is_object() ||
      !metadata.contains("ownerReferences") ||
      !metadata["ownerReferences"].is_array()) {
    return "";
  }
  const std::string suffix = "-" + *hash;
  for (const json& ref : metadata["ownerReferences"]) {
    if (!ref.is_object()) continue;
    bool controller = ref.contains("controller") &&
                      ref["controller"].is_boolean() &&
                      ref["controller"].get<bool>();
    std::optional<std::string> kind = StringAt(ref, "kind");
    std::optional<std::string> name = StringAt(ref, "name");
    if (!controller || kind != "ReplicaSet" || !name ||
        name->size() <= suffix.size() || !name->ends_with(suffix)) {
      continue;
    }
    return name->substr(0, name->size() - suffix.size());
  }
  return "";
}

ReplicaBackends BackendsOf(const kube::Informer::Objects& pods) {
  ReplicaBackends out;
  // The pod that claims each site, and the sites two claim.
  std::map<ReplicaBackends::Site, std::string> claimed;
  std::map<ReplicaBackends::Site, std::vector<std::string>> contested;
  for (const auto& [name, pod] : pods) {
    if (!kube::PodReady(pod) || !pod.contains("metadata")) continue;
    const json& meta = pod["metadata"];
    std::optional<std::string> service =
        StringField(meta, "labels", k8s::kLabelService);
    std::optional<std::string> ip = pod.contains("status")
                                        ? StringField(pod, "status", "podIP")
                                        : std::nullopt;
    json containers = pod.contains("spec") && pod["spec"].is_object()
                          ? pod["spec"].value("containers", json())
                          : json();
    int port = k8s::RoutePortOf(containers);
    if (!service || !ip || ip->empty()) continue;
    // Said like a bad address (issue 92: such a pod got no traffic with no
    // word why).
    if (port <= 0) {
      out.refused.push_back(fmt::format(
          "pod {}: no container port to send requests to (a port named "
          "http, else the first, as a whole number); it gets no traffic",
          name));
      continue;
    }
    int grpc_port = k8s::GrpcPortOf(containers);
    // Only a checked Endpoint goes on: whoever can write a pod's status
    // (a node's kubelet) must not reach the proxy's configuration.
    StatusOr<Endpoint> http = Endpoint::ParseIp(*ip, port);
    StatusOr<Endpoint> grpc =
        http.ok() && grpc_port != 0 ? http->AtPort(grpc_port) : http;
    if (!http.ok() || !grpc.ok()) {
      out.refused.push_back(
          IsIpAddress(*ip)
              ? fmt::format("pod {}: container port {} is not a TCP port; it "
                            "gets no traffic",
                            name, IsPort(port) ? grpc_port : port)
              : fmt::format("pod {}: status.podIP {} is not an IP address; "
                            "it gets no traffic",
                            name, json(*ip).dump()));
      continue;
    }
    ProxyBackend backend{*http, 1,
                         grpc_port != 0 ? std::optional(*grpc) : std::nullopt};
    if (std::optional<std::string> uid = StringField(pod, "metadata", "uid")) {
      out.by_uid.insert_or_assign(*uid, backend);
    }
    std::string owner = DeploymentOf(meta);
    if (std::optional<cluster::ReplicaSite> site = k8s::ReplicaSiteOf(meta)) {
      ReplicaBackends::Site at{*service, *site};
      auto [first, fresh] = claimed.emplace(at, name);
      if (fresh) {
        out.by_site.insert_or_assign(at, backend);
        out.site_owners[at] = owner;
      } else {
        contested[at].push_back(name);
      }
    } else if (auto group = StringField(meta, "labels", k8s::kLabelGroup)) {
      out.by_group[{*service, *group}].emplace_back(owner, backend);
    }
  }
  // Two pods at one site: one copies the other's labels, and the site's
  // labels cannot tell which is the replica; only a route that names its
  // pod's uid reaches it.
  for (const auto& [at, others] : contested) {
    out.by_site.erase(at);
    std::string all = claimed.at(at);
    for (const std::string& other : others) all += ", " + other;
    out.refused.push_back(fmt::format(
        "pods {} all claim service {} on GPU {} of node {} at slice {}; "
        "none gets traffic by its labels (a route naming its uid still "
        "reaches the replica)",
        all, at.first, at.second.gpu.index, at.second.gpu.node,
        at.second.start));
  }
  return out;
}

ProxyConfig ConfigOf(const k8s::ProxyRoutes& routes,
                     const kube::Informer::Objects& pods) {
  return ConfigOf(routes, BackendsOf(pods));
}

ProxyConfig ConfigOf(const k8s::ProxyRoutes& routes,
                     const ReplicaBackends& backends) {
  const auto& by_site = backends.by_site;
  const auto& by_uid = backends.by_uid;
  const auto& by_group = backends.by_group;
  ProxyConfig config;
  config.generation = routes.generation;
  for (const auto& [service, route] : routes.services) {
    // The routes' reader took only plain names; a name that is not one
    // gets no upstream.
    StatusOr<ServiceName> name = ServiceName::Parse(service);
    StatusOr<ModelName> model = ModelName::Parse(route.model);
    if (!name.ok() || !model.ok()) continue;
    ProxyUpstream upstream{*name,        *model,        {},
                           route.openai, route.aliases, route.affinity};
    for (const cluster::RouteGroup& g : route.route.groups) {
      if (g.weight <= 0) continue;
      long weight =
          NginxWeight(cluster::ReplicaWeight(g.weight, g.members.size()));
      for (const cluster::ReplicaSite& m : g.members) {
        // The pod the controller owns where the route names it; else the
        // one with the member's site labels.
        const ProxyBackend* backend = nullptr;
        if (auto uid = route.uids.find(m); uid != route.uids.end()) {
          auto it = by_uid.find(uid->second);
          if (it != by_uid.end()) backend = &it->second;
        } else if (auto it = by_site.find({service, m}); it != by_site.end()) {
          // Where the route names the member's Deployment, only its pod.
          auto owner = route.owners.find(m);
          auto has = backends.site_owners.find({service, m});
          if (owner == route.owners.end() ||
              (has != backends.site_owners.end() &&
               has->second == owner->second)) {
            backend = &it->second;
          }
        }
        if (backend == nullptr) continue;
        upstream.backends.push_back(*backend);
        upstream.backends.back().weight = weight;
        if (route.openai) upstream.backends.back().max_conns = MaxConnsOf(g);
      }
      auto group = by_group.find({service, k8s::GroupName(service, g)});
      if (group == by_group.end()) continue;
      // The Deployments the route names for the group's members: only
      // their pods, where it names any.
      std::set<std::string> owners;
      for (const cluster::ReplicaSite& m : g.members) {
        if (auto owner = route.owners.find(m); owner != route.owners.end()) {
          owners.insert(owner->second);
        }
      }
      for (auto [owner, b] : group->second) {
        if (!owners.empty() && !owners.count(owner)) continue;
        b.weight = weight;
        if (route.openai) b.max_conns = MaxConnsOf(g);
        upstream.backends.push_back(b);
      }
    }
    config.upstreams.push_back(std::move(upstream));
  }
  return config;
}

ControlPlane::ControlPlane(kube::KubeClient* client,
                           ControlPlaneOptions options, Apply apply)
    : client_(client),
      options_(std::move(options)),
      apply_(std::move(apply)),
      pods_(client,
            fmt::format("/api/v1/namespaces/{}/pods", options_.namespace_),
            kube::LabelSelector(k8s::ManagedLabels()).Query(), 300,
            [this] { Changed(); }),
      routes_(
          client,
          fmt::format("/api/v1/namespaces/{}/configmaps", options_.namespace_),
          kube::LabelSelector(k8s::ProxyLabels()).Query(), 300,
          [this] { Changed(); }) {}

void ControlPlane::Changed() {
  MutexLock lock(&mu_);
  dirty_ = true;
  changed_.notify_all();
}

StatusOr<bool> ControlPlane::Sync() {
  MIGSERVE_ASSIGN_OR_RETURN(kube::Informer::Objects maps, routes_.Get());
  MIGSERVE_ASSIGN_OR_RETURN(kube::Informer::Objects pods, pods_.Get());
  k8s::ProxyRoutes routes;
  if (auto it = maps.find(k8s::kProxyRoutesName); it != maps.end()) {
    MIGSERVE_ASSIGN_OR_RETURN(routes, k8s::ParseProxyRoutes(it->second));
  }
  // Routes written by a controller older than one seen already (a leader
  // replaced while it stalled) are not served: the last good ones stay.
  if (routes.epoch < newest_epoch_) {
    return Status::FailedPrecondition(fmt::format(
        "routes generation {} written at lease epoch {}, older than epoch "
        "{} seen already: not applied (a controller replaced while it "
        "stalled?)",
        routes.generation, routes.epoch, newest_epoch_));
  }
  newest_epoch_ = routes.epoch;
  // Services whose names differ only in letter case would be one nginx
  // upstream (its names ignore case), and nginx -t would refuse every
  // configuration after (issue 92: every route change stalled): both are
  // refused by name, the others served.
  std::map<std::string, std::vector<std::string>> by_lower;
  for (const auto& [service, route] : routes.services) {
    std::string lower = service;
    for (char& c : lower) c = static_cast<char>(std::tolower(c));
    by_lower[lower].push_back(service);
  }
  for (const auto& [lower, names] : by_lower) {
    if (names.size() < 2) continue;
    std::string why = fmt::format(
        "routes of {} refused: their names differ only in letter case, "
        "which nginx's upstreams do not tell apart",
        fmt::join(names, " and "));
    if (refused_.insert(why).second && options_.log) {
      options_.log("router: " + why);
    }
    for (const std::string& name : names) routes.services.erase(name);
  }
  ReplicaBackends backends = BackendsOf(pods);
  for (const std::string& why : backends.refused) {
    if (refused_.insert(why).second && options_.log) {
      options_.log("router: " + why);
    }
  }
  ProxyConfig config = ConfigOf(routes, backends);
  // A new generation of the same routes is served already: nginx is not
  // reloaded for it (a reload closes idle keep-alive connections), and
  // the generation is reported at once. Its /migserve/generation keeps
  // naming the generation it loaded.
  bool served = applied_ && applied_->upstreams == config.upstreams &&
                (applied_->generation > 0) == (config.generation > 0);
  bool applied = false;
  if (!served) {
    MIGSERVE_RETURN_IF_ERROR(apply_(config));
    applied_ = config;
    applied = true;
    Applied(config);
  }
  if (!options_.pod.empty() && reported_ != config.generation) {
    kube::Annotations notes;
    notes.Set(k8s::kAnnotationProxyGeneration,
              std::to_string(config.generation));
    MIGSERVE_RETURN_IF_ERROR(
        client_
            ->Patch(fmt::format("/api/v1/namespaces/{}/pods/{}",
                                options_.namespace_, options_.pod),
                    notes.Patch())
            .status());
    reported_ = config.generation;
  }
  MutexLock lock(&stats_mu_);
  stats_.generation = config.generation;
  return applied;
}

void ControlPlane::Applied(const ProxyConfig& config) {
  int replicas = 0;
  for (const ProxyUpstream& u : config.upstreams) {
    replicas += static_cast<int>(u.backends.size());
  }
  {
    MutexLock lock(&stats_mu_);
    ++stats_.applies;
    stats_.services = static_cast<int>(config.upstreams.size());
    stats_.replicas = replicas;
  }
  std::string what =
      fmt::format("route generation {}: {} services, {} replicas",
                  config.generation, config.upstreams.size(), replicas);
  if (options_.log) options_.log("router: applied " + what);
  if (options_.event) options_.event(EventType::kNormal, "RoutesApplied", what);
}

void ControlPlane::Supervise() {
  Status s = options_.supervise();
  if (!s.ok() && options_.log) options_.log("router: " + s.message());
  bool was_up = false;
  {
    MutexLock lock(&stats_mu_);
    was_up = stats_.nginx.ok();
    if (!s.ok()) ++stats_.nginx_problems;
    stats_.nginx = s;
  }
  if (!options_.event || was_up == s.ok()) return;
  if (s.ok()) {
    options_.event(EventType::kNormal, "NginxRecovered", "nginx answers again");
  } else {
    options_.event(EventType::kWarning, "NginxDown", s.message());
  }
}

void ControlPlane::SyncEnded(const Status& status) {
  bool started_failing = false;
  {
    MutexLock lock(&stats_mu_);
    if (!status.ok()) ++stats_.failed_syncs;
    started_failing = !status.ok() && !stats_.failing;
    stats_.failing = !status.ok();
  }
  if (started_failing && options_.event) {
    options_.event(EventType::kWarning, "SyncFailed", status.message());
  }
}

std::string ControlPlane::Metrics() const {
  MutexLock lock(&stats_mu_);
  PrometheusText out;
  auto one = [&out](const char* name, const char* type, const char* help,
                    double value) {
    out.Family(name, type, help);
    out.Sample(name, value);
  };
  one("migserve_router_route_generation", "gauge",
      "The generation of the controller's routes the proxy serves (0: none "
      "read yet).",
      stats_.generation);
  one("migserve_router_applies_total", "counter",
      "Configurations applied to nginx (each a reload).", stats_.applies);
  one("migserve_router_failed_syncs_total", "counter",
      "Syncs that failed (routes or pods unreadable, nginx refused the "
      "configuration); the proxy kept its last one.",
      stats_.failed_syncs);
  one("migserve_router_nginx_up", "gauge",
      "1 while nginx answers, 0 while it is down and not restarted.",
      stats_.nginx.ok() ? 1 : 0);
  one("migserve_router_nginx_problems_total", "counter",
      "Times the router found nginx dead or not listening.",
      stats_.nginx_problems);
  one("migserve_router_services", "gauge",
      "Services the applied configuration routes.", stats_.services);
  one("migserve_router_replicas", "gauge",
      "Replicas the applied configuration routes to.", stats_.replicas);
  return out.text();
}

Status ControlPlane::Health() const {
  MutexLock lock(&stats_mu_);
  return stats_.nginx;
}

void ControlPlane::Run(const std::atomic<bool>& stop, double resync_s) {
  using Clock = std::chrono::steady_clock;
  auto next = Clock::now();
  auto next_check = Clock::now();
  while (!stop) {
    if (options_.supervise && Clock::now() >= next_check) {
      next_check = Clock::now() + std::chrono::seconds(1);
      Supervise();
    }
    bool due = false;
    {
      MutexLock lock(&mu_);
      auto until = Clock::now() + std::chrono::milliseconds(100);
      while (!dirty_ && lock.WaitUntil(&changed_, until)) {
      }
      due = dirty_ || Clock::now() >= next;
      dirty_ = false;
    }
    if (!due) continue;
    next = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(resync_s));
    StatusOr<bool> synced = Sync();
    SyncEnded(synced.status());
    if (synced.ok()) continue;
    if (options_.log) options_.log("router: " + synced.status().message());
    // Try again in a second.
    next = Clock::now() + std::chrono::seconds(1);
  }
}

}  // namespace migserve::proxy
