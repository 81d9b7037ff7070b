// The proxy's control plane (`migserve router`, docs/serving.md, "The
// proxy"): one per proxy pod, next to its nginx. It watches the routes the
// controller keeps (migserve-proxy-routes,
// kubernetes/routing/proxy_routes.h) and the replica pods through the
// Kubernetes API, turns them into a ProxyConfig (every Ready member of a
// weighted group at its pod's IP and port, weighted by its credit), has the
// proxy apply it and drain the old workers, and then reports on its own pod the
// route generation it serves, which the controller waits for before it deletes
// a replica.
#ifndef MIGSERVE_PROXY_CONTROL_PLANE_H_
#define MIGSERVE_PROXY_CONTROL_PLANE_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kube/informer.h"
#include "kube/kube_client.h"
#include "kubernetes/routing/proxy_routes.h"
#include "proxy/proxy_config.h"
#include "util/event.h"
#include "util/log_sink.h"
#include "util/mutex.h"
#include "util/status_or.h"

namespace migserve::proxy {

// Where the proxy reaches replicas: by service and site, by pod uid, and,
// for pods without a site (an exported Deployment's), by service and
// routing group.
struct ReplicaBackends {
  using Site = std::pair<std::string, cluster::ReplicaSite>;
  std::map<Site, ProxyBackend> by_site;
  // The Deployment of the pod at each site (DeploymentOf; "" for none).
  std::map<Site, std::string> site_owners;
  std::map<std::string, ProxyBackend> by_uid;
  // Each pod's Deployment ("" for none) and backend.
  std::map<std::pair<std::string, std::string>,
           std::vector<std::pair<std::string, ProxyBackend>>>
      by_group;
  // Ready replica pods given no traffic, each with why: a status.podIP
  // that is not an IP address, a port that is not a TCP port (whoever can
  // write a pod's status must not reach the proxy's configuration), two
  // pods claiming one site (by_site then has neither).
  std::vector<std::string> refused;
};

// The Ready replica pods among `pods` (by name) whose status.podIP is an IP
// address literal, at their route port (the container port named "http",
// else the first) and gRPC port (the one named "grpc", if any), ports from
// 1 to 65535; the others are `refused`.
ReplicaBackends BackendsOf(const kube::Informer::Objects& pods);

// The Deployment whose ReplicaSet controls the pod of `metadata`: its
// controller owner reference of kind ReplicaSet, named `<deployment>-<the
// pod's pod-template-hash label>`; "" if it has none.
std::string DeploymentOf(const nlohmann::json& metadata);

// What the proxy serves for `routes` over `backends`: per service, each
// member of a group with weight that has a backend (the one with its uid
// where the route names one, else the one at its site whose Deployment is
// the member's owner where the route names one), weighted
// NginxWeight(cluster::ReplicaWeight); a group's backends without a site
// are taken by its name, only those of its members' owners where the
// route names any. Generation: the routes'.
ProxyConfig ConfigOf(const kubernetes::ProxyRoutes& routes,
                     const ReplicaBackends& backends);
// The same over the replica pods.
ProxyConfig ConfigOf(const kubernetes::ProxyRoutes& routes,
                     const kube::Informer::Objects& pods);

struct ControlPlaneOptions {
  std::string namespace_ = "default";
  std::string pod;  // this proxy's pod, where it reports; empty: nowhere
  LogSink log;      // may be empty
  // Called about every second by Run, between syncs: keeps the data plane
  // running (NginxProcess::Supervise). An error is logged. May be empty.
  std::function<Status()> supervise;
  // Hears what an operator should see in `kubectl describe` of the proxy's
  // pod: RoutesApplied (Normal) for each configuration Run applies,
  // SyncFailed (Warning) when syncs start failing, NginxDown (Warning) and
  // NginxRecovered (Normal) as supervision finds the data plane. May be
  // empty.
  EventSink event;
};

class ControlPlane {
 public:
  // Applies a configuration and waits for the old one to drain.
  using Apply = std::function<Status(const ProxyConfig&)>;

  // `client` is not owned and outlives the control plane.
  ControlPlane(kube::KubeClient* client, ControlPlaneOptions options,
               Apply apply);

  // Reads the routes and pods; if what the proxy should serve changed
  // (its upstreams, or whether it has read routes at all), applies it;
  // reports the generation once it is served. Returns whether it applied
  // a configuration (not for a new generation of the same routes).
  StatusOr<bool> Sync();

  // Syncs at every change the watches see (and every `resync_s`) until
  // `stop`; a failed sync is logged and tried again.
  void Run(const std::atomic<bool>& stop, double resync_s = 10);

  // The Prometheus text of /metrics: the generation served, configurations
  // applied (by Sync), failed syncs (of Run), nginx's state and what the
  // proxy routes to. Safe from any thread.
  std::string Metrics() const;
  // /healthz: Unavailable with the data plane's problem while supervising
  // it fails (nginx dead and not restarted), else Ok. A sync that fails
  // (the API out of reach) is not a health problem: the proxy keeps
  // serving its last routes.
  Status Health() const;

 private:
  // What Metrics reports.
  struct Stats {
    long generation = 0;  // served
    long applies = 0;
    long failed_syncs = 0;
    long nginx_problems = 0;
    Status nginx = Status::Ok();  // the last supervision's
    int services = 0;
    int replicas = 0;
    bool failing = false;  // the last sync failed
  };

  void Changed();
  void Supervise();
  // Counts, logs and tells of a configuration just applied.
  void Applied(const ProxyConfig& config);
  // Counts a sync's end, and tells when syncs start failing.
  void SyncEnded(const Status& status);

  kube::KubeClient* client_;
  ControlPlaneOptions options_;
  Apply apply_;
  Mutex mu_;
  std::condition_variable changed_;
  bool dirty_ GUARDED_BY(mu_) = true;
  kube::Informer pods_;
  kube::Informer routes_;
  std::optional<ProxyConfig> applied_;
  long reported_ = -1;
  std::set<std::string> refused_;  // pods refused, said once each
  long newest_epoch_ = 0;          // of the routes applied (kAnnotationEpoch)
  mutable Mutex stats_mu_;
  Stats stats_ GUARDED_BY(stats_mu_);
};

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_CONTROL_PLANE_H_
