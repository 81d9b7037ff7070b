// The proxy's control plane against the stand-in API server, with the real
// nginx in front of emulated replicas: the controller's router (proxy
// mode) changes weights and takes a replica out mid-run; SetRoute returns
// only once the proxy applied it and drained, no request fails, and the
// removed replica gets nothing afterwards.
#include "proxy/control_plane.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "boundary/input_file.h"
#include "kube/event_recorder.h"
#include "kube/testing/api_server_standin.h"
#include "kubernetes/names.h"
#include "kubernetes/routing/kubernetes_router.h"
#include "kubernetes/routing/proxy_objects.h"
#include "proxy/nginx_config.h"
#include "proxy/nginx_process.h"
#include "proxy/testing/emulated_replica.h"
#include "proxy/testing/kept_alive.h"
#include "proxy/testing/local_nginx.h"
#include "proxy/testing/proxy_values.h"
#include "proxy/testing/ready_pod.h"
#include "util/test_util.h"

namespace migserve::proxy {
namespace {

namespace k8s = kubernetes;
using json = nlohmann::json;

json Pod(const std::string& service, const std::string& node, int gpu,
         int start, int port, bool ready) {
  return ReadyReplicaPod(service, {{node, gpu}, start}, port, ready);
}

cluster::RouteGroup Group(double throughput,
                          std::vector<cluster::ReplicaSite> members) {
  cluster::RouteGroup g{"A100-SXM4-80GB",
                        "1g.10gb",
                        8,
                        1,
                        static_cast<int>(members.size()),
                        throughput,
                        0,
                        std::move(members)};
  return g;
}

// A client of `server` as its administrator.
kube::KubeClient AdminOf(const kube::ApiServerStandIn& server) {
  return kube::KubeClient(server.ClientConfig("default", "admin"));
}

cluster::ServiceRoute Route(std::vector<cluster::RouteGroup> groups) {
  cluster::ServiceRoute route{"s", std::move(groups)};
  cluster::WeighRoute(&route);
  return route;
}

// Writes `routes` in namespace `ns` as the controller does (the routes
// ConfigMap).
void PutRoutes(kube::ApiServerStandIn* server, const std::string& ns,
               const k8s::ProxyRoutes& routes) {
  server->Put(fmt::format("/api/v1/namespaces/{}/configmaps/{}", ns,
                          k8s::kProxyRoutesName),
              k8s::ProxyRoutesConfigMap(routes, ns));
}

TEST(ControlPlaneTest, ConfigOfTakesReadyMembersWeighedByCredit) {
  k8s::ProxyRoutes routes{
      7,
      {{"s",
        {Route({Group(10, {{{"n", 0}, 0}, {{"n", 0}, 1}, {{"n", 0}, 2}}),
                Group(40, {{{"n", 1}, 0}})}),
         "m"}}}};
  kube::Informer::Objects pods;
  for (auto [start, port, ready] :
       {std::tuple{0, 9000, true}, {1, 9001, false}, {2, 9002, true}}) {
    pods["a" + std::to_string(start)] = Pod("s", "n", 0, start, port, ready);
  }
  pods["b"] = Pod("s", "n", 1, 0, 9100, true);
  pods["stray"] = Pod("s", "n", 1, 3, 9200, true);  // not a member
  pods["other"] = Pod("t", "n", 0, 0, 9300, true);  // not a routed service
  ProxyConfig config = ConfigOf(routes, pods);
  EXPECT_EQ(config.generation, 7);
  ASSERT_EQ(config.upstreams.size(), 1u);
  EXPECT_EQ(config.upstreams[0].model.str(), "m");
  // cluster::ReplicaWeight: the group's route weight (its capacity in
  // thousandths of a req/s: 3 x 10 and 1 x 40) over its 3 and 1 members,
  // a member that is not Ready included.
  EXPECT_EQ(config.upstreams[0].backends,
            (std::vector<ProxyBackend>{Backend("127.0.0.1", 9000, 10000),
                                       Backend("127.0.0.1", 9002, 10000),
                                       Backend("127.0.0.1", 9100, 40000)}));
}

// Whoever can write one pod's status (a compromised node's kubelet) must not
// reprogram the proxy (issue 76): a podIP that is not an IP address
// literal, here one that closes the upstream and opens a listener, and a
// container port that is no TCP port (99999999 made nginx refuse every
// later configuration) give the pod no traffic and are said; the other
// members are served, and no line of the rendered configuration carries
// the injected text.
TEST(ControlPlaneTest, AForgedPodAddressOrPortNeverReachesNginx) {
  k8s::ProxyRoutes routes{
      3,
      {{"s",
        {Route({Group(
             10,
             {{{"n", 0}, 0}, {{"n", 0}, 1}, {{"n", 0}, 2}, {{"n", 0}, 3}})}),
         "m"}}}};
  kube::Informer::Objects pods;
  pods["good"] = Pod("s", "n", 0, 0, 9000, true);
  pods["inject"] = Pod("s", "n", 0, 1, 9001, true);
  pods["inject"]["status"]["podIP"] =
      "127.0.0.1:18503; } server { listen 18097; return 200 \"pwn\"; } "
      "upstream x { server 127.0.0.1";
  pods["port"] = Pod("s", "n", 0, 2, 99999999, true);
  pods["v6"] = Pod("s", "n", 0, 3, 9003, true);
  pods["v6"]["status"]["podIP"] = "fd00::17";
  ReplicaBackends backends = BackendsOf(pods);
  ASSERT_EQ(backends.refused.size(), 2u);
  EXPECT_EQ(backends.refused[0].substr(0, 50),
            "pod inject: status.podIP \"127.0.0.1:18503; } serve");
  EXPECT_NE(backends.refused[0].find("is not an IP address; it gets no "
                                     "traffic"),
            std::string::npos);
  // Named like a bad address (issue 92: it was left out without a word).
  EXPECT_EQ(backends.refused[1],
            "pod port: no container port to send requests to (a port named "
            "http, else the first, as a whole number); it gets no traffic");
  ProxyConfig config = ConfigOf(routes, backends);
  ASSERT_EQ(config.upstreams.size(), 1u);
  // The port out of range is no port: the pod has no route port at all.
  EXPECT_EQ(config.upstreams[0].backends,
            (std::vector<ProxyBackend>{Backend("127.0.0.1", 9000, 10000),
                                       Backend("fd00::17", 9003, 10000)}));
  std::string text = RenderNginxConfig(config, {});
  EXPECT_EQ(text.find("pwn"), std::string::npos);
  EXPECT_EQ(text.find("18097"), std::string::npos);
  EXPECT_NE(text.find("server 127.0.0.1:9000 weight=10000"), std::string::npos);
  EXPECT_NE(text.find("server [fd00::17]:9003 weight=10000"),
            std::string::npos);
  // No configuration can reach the renderer unchecked: its addresses and
  // names are values only their checks make (boundary/), with no other
  // constructor and no default.
  static_assert(!std::is_constructible_v<Endpoint, std::string, int>);
  static_assert(!std::is_default_constructible_v<Endpoint>);
  static_assert(!std::is_constructible_v<ServiceName, std::string>);
  static_assert(!std::is_default_constructible_v<ServiceName>);
  static_assert(!std::is_default_constructible_v<ProxyUpstream>);
  EXPECT_FALSE(Endpoint::Parse("1.2.3.4; } server { listen 1", 9004).ok());
  EXPECT_FALSE(Endpoint::Parse("10.0.0.9", 70000).ok());
}

// A pod that copies a replica's labels (anyone who may create pods can)
// does not get its traffic: where the route names the member's pod by the
// uid the controller's ledger holds, only that pod is taken.
TEST(ControlPlaneTest, ConfigOfTakesOnlyThePodTheRouteNamesByUid) {
  k8s::ProxyRoutes routes{3,
                          {{"s", {Route({Group(10, {{{"n", 0}, 0}})}), "m"}}}};
  kube::Informer::Objects pods;
  pods["real"] = Pod("s", "n", 0, 0, 9000, true);
  pods["real"]["metadata"]["uid"] = "uid-real";
  pods["forged"] = Pod("s", "n", 0, 0, 9666, true);
  pods["forged"]["metadata"]["uid"] = "uid-forged";
  // By labels alone the two are the same member: neither gets traffic
  // (before, the one whose name sorted last did), and the refusal says so.
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(ConfigOf(routes, pods).upstreams[0].backends.empty());
    ReplicaBackends backends = BackendsOf(pods);
    ASSERT_EQ(backends.refused.size(), 1u);
    EXPECT_EQ(backends.refused[0],
              "pods forged, real all claim service s on GPU 0 of node n at "
              "slice 0; none gets traffic by its labels (a route naming its "
              "uid still reaches the replica)");
    std::swap(pods["real"], pods["forged"]);
  }
  routes.services["s"].uids[{{"n", 0}, 0}] = "uid-real";
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ConfigOf(routes, pods).upstreams[0].backends,
              (std::vector<ProxyBackend>{Backend("127.0.0.1", 9000, 10000)}));
    std::swap(pods["real"], pods["forged"]);
  }
  // Once the real pod is gone, the member has no pod.
  pods.erase("real");
  EXPECT_TRUE(ConfigOf(routes, pods).upstreams[0].backends.empty());
}

// A pod of an exported Deployment, as its ReplicaSet makes it: controlled
// by `<deployment>-<hash>` and labelled pod-template-hash=<hash>.
json OwnedBy(json pod, const std::string& deployment, const std::string& hash) {
  pod["metadata"]["labels"]["pod-template-hash"] = hash;
  pod["metadata"]["ownerReferences"] =
      json::array({{{"apiVersion", "apps/v1"},
                    {"kind", "ReplicaSet"},
                    {"name", deployment + "-" + hash},
                    {"uid", "rs-uid"},
                    {"controller", true}}});
  return pod;
}

TEST(ControlPlaneTest, DeploymentOfReadsTheControllingReplicaSet) {
  json pod = OwnedBy(Pod("s", "n", 0, 0, 9000, true), "bert-1-n-1g", "7d9f");
  EXPECT_EQ(DeploymentOf(pod["metadata"]), "bert-1-n-1g");
  json other = pod;
  other["metadata"]["ownerReferences"][0]["controller"] = false;
  EXPECT_EQ(DeploymentOf(other["metadata"]), "");
  other = pod;
  other["metadata"]["ownerReferences"][0]["kind"] = "StatefulSet";
  EXPECT_EQ(DeploymentOf(other["metadata"]), "");
  other = pod;  // a hash the name does not end with
  other["metadata"]["labels"]["pod-template-hash"] = "zzz";
  EXPECT_EQ(DeploymentOf(other["metadata"]), "");
  other = pod;  // whatever the types, nothing throws
  other["metadata"]["ownerReferences"] = json::array({1, "x", {{"kind", 2}}});
  EXPECT_EQ(DeploymentOf(other["metadata"]), "");
  EXPECT_EQ(DeploymentOf(json::array()), "");
}

// Issue 76: a pod that copies an exported replica's labels got its
// traffic. Export's routes name each member's Deployment; the proxy takes
// only pods its ReplicaSet controls, by site (a DRA export's one-replica
// Deployments) and by group (the device plugin's).
TEST(ControlPlaneTest, ExportedRoutesTakeOnlyTheirDeploymentsPods) {
  const cluster::ReplicaSite at0{{"n", 0}, 0}, at1{{"n", 0}, 1};
  k8s::ProxyRoutes routes{1, {{"s", {Route({Group(10, {at0, at1})}), "m"}}}};
  routes.services["s"].owners = {{at0, "s-n-0-0"}, {at1, "s-n-0-1"}};
  kube::Informer::Objects pods;
  pods["real-0"] = OwnedBy(Pod("s", "n", 0, 0, 9000, true), "s-n-0-0", "h0");
  // Copies of the labels: no owner, another Deployment's ReplicaSet.
  pods["forged-1"] = Pod("s", "n", 0, 1, 9666, true);
  ProxyConfig config = ConfigOf(routes, pods);
  ASSERT_EQ(config.upstreams.size(), 1u);
  EXPECT_EQ(config.upstreams[0].backends,
            (std::vector<ProxyBackend>{Backend("127.0.0.1", 9000, 10000)}));
  pods["forged-1"] = OwnedBy(pods["forged-1"], "attacker", "h1");
  EXPECT_EQ(ConfigOf(routes, pods).upstreams[0].backends.size(), 1u);
  pods["forged-1"] = OwnedBy(Pod("s", "n", 0, 1, 9001, true), "s-n-0-1", "h1");
  EXPECT_EQ(ConfigOf(routes, pods).upstreams[0].backends.size(), 2u);

  // Group pods, without site labels: only those of the members' owners.
  const cluster::RouteGroup group = Group(10, {at0, at1});
  const std::string label = k8s::GroupName("s", group);
  auto group_pod = [&](int port) {
    json pod = Pod("s", "n", 0, 0, port, true);
    for (const char* site :
         {k8s::kLabelNode, k8s::kLabelGpu, k8s::kLabelStart}) {
      pod["metadata"]["labels"].erase(site);
    }
    pod["metadata"]["labels"][k8s::kLabelGroup] = label;
    return pod;
  };
  routes.services["s"].owners = {{at0, "s-n-1g"}, {at1, "s-n-1g"}};
  kube::Informer::Objects grouped;
  grouped["real-a"] = OwnedBy(group_pod(9100), "s-n-1g", "h2");
  grouped["real-b"] = OwnedBy(group_pod(9101), "s-n-1g", "h2");
  grouped["forged"] = group_pod(9666);
  grouped["other"] = OwnedBy(group_pod(9667), "s-n-2g", "h3");
  std::vector<ProxyBackend> taken =
      ConfigOf(routes, grouped).upstreams[0].backends;
  ASSERT_EQ(taken.size(), 2u);
  for (const ProxyBackend& b : taken) EXPECT_LT(b.http.port(), 9200);
  // Routes that name no owner (the controller's, or an older export's)
  // take a group's pods as before.
  routes.services["s"].owners.clear();
  EXPECT_EQ(ConfigOf(routes, grouped).upstreams[0].backends.size(), 4u);
}

// A stand-in API server the router reads as an admin, for the tests that
// run the control plane against it.
class ControlPlaneServerTest : public ::testing::Test {
 protected:
  static constexpr char kNs[] = "migserve-replicas";
  void SetUp() override {
    ASSERT_TRUE(server.Start().ok());
    client = std::make_unique<kube::KubeClient>(AdminOf(server));
  }
  // The path of the pod `name` of kNs.
  static std::string PodPath(const std::string& name) {
    return fmt::format("/api/v1/namespaces/{}/pods/{}", kNs, name);
  }
  // Puts `pod` as the pod `name` of kNs.
  void PutPod(const std::string& name, const nlohmann::json& pod) {
    server.Put(PodPath(name), pod);
  }
  kube::ApiServerStandIn server{{"", "", "admin"}};
  std::unique_ptr<kube::KubeClient> client;
};

// The router runs as the proxy's service account (the Role export writes
// into proxy.yaml), the controller's route keeper as the controller's
// (deploy/base/rbac.yaml), both enforced by the stand-in API server.
// A new generation that changes nothing nginx serves (here: a member whose
// pod is not Ready yet) is reported without a reload, which would close
// the clients' idle keep-alive connections.
TEST_F(ControlPlaneServerTest, ANewGenerationOfTheSameUpstreamsIsNotReloaded) {
  PutPod("proxy-0", {{"metadata", {{"name", "proxy-0"}}}});
  PutPod("a", Pod("s", "n", 0, 0, 9000, true));
  PutPod("b", Pod("s", "n", 0, 1, 9001, false));
  auto put_routes = [&](long generation, cluster::ServiceRoute route) {
    server.Put(fmt::format("/api/v1/namespaces/{}/configmaps/{}", kNs,
                           k8s::kProxyRoutesName),
               k8s::ProxyRoutesConfigMap(
                   {generation, {{"s", {route, "m", {}}}}}, kNs));
  };
  std::vector<long> applied;
  ControlPlaneOptions options;
  options.namespace_ = kNs;
  options.pod = "proxy-0";
  ControlPlane plane(client.get(), options, [&](const ProxyConfig& c) {
    applied.push_back(c.generation);
    return Status::Ok();
  });
  auto reported = [&] {
    return k8s::Annotation(*server.Get(PodPath("proxy-0")),
                           k8s::kAnnotationProxyGeneration);
  };
  // Syncs until `done` (the watches see changes a moment later).
  auto sync_until = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 500 && !done(); ++i) {
      auto synced = plane.Sync();
      ASSERT_TRUE(synced.ok()) << synced.status().ToString();
      if (!done()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(done());
  };
  put_routes(1, Route({Group(10, {{{"n", 0}, 0}})}));
  sync_until([&] { return reported() == "1"; });
  EXPECT_EQ(applied, (std::vector<long>{1}));
  // b joins the route, not Ready: nginx would serve the same.
  put_routes(2,
             Route({Group(10, {{{"n", 0}, 0}}), Group(20, {{{"n", 0}, 1}})}));
  sync_until([&] { return reported() == "2"; });
  EXPECT_EQ(applied, (std::vector<long>{1}));
  // b becomes Ready: a reload.
  PutPod("b", Pod("s", "n", 0, 1, 9001, true));
  sync_until([&] { return applied.size() == 2; });
  EXPECT_EQ(applied, (std::vector<long>{1, 2}));
}

// Routes written at an older lease epoch than some already seen (a
// controller replaced while it stalled, one that checks no fence) are not
// applied: the newer routes keep being served (issue 72).
TEST_F(ControlPlaneServerTest, RoutesOfAnOlderLeaseEpochAreNotApplied) {
  PutPod("a", Pod("s", "n", 0, 0, 9000, true));
  PutPod("b", Pod("s", "n", 0, 1, 9001, true));
  auto put_routes = [&](long generation, long epoch, int start) {
    k8s::ProxyRoutes routes{
        generation,
        {{"s", {Route({Group(10, {{{"n", 0}, start}})}), "m", {}}}},
        epoch};
    PutRoutes(&server, kNs, routes);
  };
  std::vector<long> applied;
  ControlPlaneOptions options;
  options.namespace_ = kNs;
  ControlPlane plane(client.get(), options, [&](const ProxyConfig& c) {
    applied.push_back(c.generation);
    return Status::Ok();
  });
  auto sync_until =
      [&](const std::function<bool(const StatusOr<bool>&)>& done) {
        for (int i = 0; i < 500; ++i) {
          if (done(plane.Sync())) return;
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ADD_FAILURE() << "never as wanted";
      };
  put_routes(5, 2, 0);
  sync_until([&](const StatusOr<bool>&) { return applied.size() == 1; });
  put_routes(6, 1, 1);  // the stale leader's
  Status refused;
  sync_until([&](const StatusOr<bool>& s) {
    refused = s.status();
    return !s.ok();
  });
  EXPECT_EQ(refused.message(),
            "routes generation 6 written at lease epoch 1, older than epoch "
            "2 seen already: not applied (a controller replaced while it "
            "stalled?)");
  EXPECT_EQ(applied, (std::vector<long>{5}));
  put_routes(7, 3, 1);  // a newer leader's
  sync_until([&](const StatusOr<bool>&) { return applied.size() == 2; });
  EXPECT_EQ(applied, (std::vector<long>{5, 7}));
}

// Two services whose names differ only in letter case would be one nginx
// upstream, and nginx -t would refuse every configuration after (issue 92:
// every route change stalled, retried 5 times a second): both are refused
// by name, once, and the others are served.
TEST_F(ControlPlaneServerTest,
       ServicesDifferingOnlyInCaseAreRefusedTheOthersServed) {
  PutPod("a", Pod("s", "n", 0, 0, 9000, true));
  k8s::ProxyRoutes routes{
      3,
      {{"SvcA", {Route({Group(10, {{{"n", 0}, 1}})}), "m", {}}},
       {"svca", {Route({Group(10, {{{"n", 0}, 2}})}), "m", {}}},
       {"s", {Route({Group(10, {{{"n", 0}, 0}})}), "m", {}}}},
      1};
  for (auto& [name, route] : routes.services) route.route.service = name;
  PutRoutes(&server, kNs, routes);
  std::vector<ProxyConfig> applied;
  std::vector<std::string> said;
  ControlPlaneOptions options;
  options.namespace_ = kNs;
  options.log = [&](const std::string& line) { said.push_back(line); };
  ControlPlane plane(client.get(), options, [&](const ProxyConfig& c) {
    applied.push_back(c);
    return Status::Ok();
  });
  for (int i = 0; i < 500 && applied.empty(); ++i) {
    EXPECT_TRUE(plane.Sync().ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(applied.size(), 1u);
  ASSERT_EQ(applied[0].upstreams.size(), 1u);
  EXPECT_EQ(applied[0].upstreams[0].service.str(), "s");
  EXPECT_EQ(std::count(said.begin(), said.end(),
                       "router: routes of SvcA and svca refused: their names "
                       "differ only in letter case, which nginx's upstreams "
                       "do not tell apart"),
            1)
      << ::testing::PrintToString(said);
}

TEST(ControlPlaneTest, WeightsChangeAndAReplicaLeavesMidRunLosingNothing) {
  constexpr char kNs[] = "migserve-replicas";
  kube::ApiServerStandIn server(
      {"",
       "",
       "admin",
       1,
       {{"router-token", kube::ServiceAccountUser(kNs, k8s::kProxyName)},
        {"controller-token",
         kube::ServiceAccountUser("migserve", "migserve-controller")}}});
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(
      server
          .ApplyManifests(
              ReadFile(testing::SourcePath("deploy/base/rbac.yaml")).value(),
              "deploy/base/rbac.yaml")
          .ok());
  k8s::ServingSpec spec;
  spec.namespace_ = kNs;
  ASSERT_TRUE(server
                  .ApplyManifests(k8s::ProxyObjects({}, {}, spec, {}, {}),
                                  "proxy.yaml",
                                  {"ServiceAccount", "Role", "RoleBinding"})
                  .ok());
  auto as = [&](const std::string& token) {
    return kube::KubeClient(server.ClientConfig("default", token));
  };
  kube::KubeClient client = as("router-token");
  kube::KubeClient controller_client = as("controller-token");

  // Three replicas of 20 ms each, one proxy pod reporting as proxy-0.
  EmulatedReplicaOptions slow;
  slow.max_batch = 1;
  slow.batch_ms = [](int) { return 20.0; };
  EmulatedReplica a(slow), b(slow), c(slow);
  int start = 0;
  std::vector<cluster::ReplicaSite> sites;
  for (EmulatedReplica* r : {&a, &b, &c}) {
    json pod = Pod("s", "n", 0, start, r->port(), true);
    pod["metadata"]["namespace"] = kNs;
    server.Put("/api/v1/namespaces/migserve-replicas/pods/" +
                   pod["metadata"]["name"].get<std::string>(),
               pod);
    sites.push_back({{"n", 0}, start++});
  }
  json proxy_pod = {
      {"metadata",
       {{"name", "proxy-0"},
        {"namespace", kNs},
        {"labels",
         {{k8s::kManagedBy, k8s::kManager},
          {k8s::kLabelComponent, k8s::kProxyComponent}}}}},
      {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  server.Put("/api/v1/namespaces/migserve-replicas/pods/proxy-0", proxy_pod);

  int port = testing::FreePort();
  NginxSetup setup;
  setup.listen = Local(port);
  setup.prefix = RunDir(migserve::testing::TempDir() + "/nginx");
  setup.worker_processes = 1;
  auto nginx = NginxProcess::Start(NginxBinary(), setup, {0, {}});
  ASSERT_TRUE(nginx.ok()) << nginx.status().ToString();
  ControlPlaneOptions options;
  options.namespace_ = kNs;
  options.pod = "proxy-0";
  // Its events, about its pod, with the permissions export gives it.
  kube::EventRecorder events(&client,
                             {{"apiVersion", "v1"},
                              {"kind", "Pod"},
                              {"name", "proxy-0"},
                              {"namespace", kNs}},
                             "migserve-router");
  std::vector<std::string> unrecorded;
  options.event =
      events.Sink([&](const std::string& line) { unrecorded.push_back(line); });
  ControlPlane plane(&client, options, [&](const ProxyConfig& config) {
    return (*nginx)->ApplyAndDrain(config);
  });
  std::atomic<bool> stop{false};
  std::thread router([&] { plane.Run(stop, 1); });

  k8s::RouterOptions routing;
  routing.namespace_ = kNs;
  routing.plane = queueing::DataPlane::kProxy;
  routing.models = {{"s", "m"}};
  k8s::KubernetesRouter controller(&controller_client, routing);
  auto set = controller.SetRoute(Route({Group(10, sites)}));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_TRUE(*set);
  EXPECT_EQ(
      k8s::Annotation(
          *server.Get("/api/v1/namespaces/migserve-replicas/pods/proxy-0"),
          k8s::kAnnotationProxyGeneration),
      "1");

  // Four clients keep requests in flight throughout.
  std::atomic<int> failed{0};
  std::atomic<int> retried{0};
  std::atomic<int> sent{0};
  std::vector<std::thread> load;
  for (int i = 0; i < 4; ++i) {
    load.emplace_back([&] {
      httplib::Client client("127.0.0.1", port);
      client.set_tcp_nodelay(true);
      // One connection each, reused across the reloads. A reload closes
      // a connection idle between two requests (docs/serving.md, "Reloads
      // and keep-alive"): a request written at that instant gets no
      // response, and is sent again once, as clients should.
      client.set_keep_alive(true);
      while (!stop) {
        if (!InferKeptAlive(&client, true, &retried)) ++failed;
        ++sent;
      }
    });
  }
  auto wait_sent = [&](int more) {
    int until = sent + more;
    while (sent < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  wait_sent(60);
  // c's credit doubles: it takes half of the requests from then on.
  std::vector<cluster::ReplicaSite> ab(sites.begin(), sites.begin() + 2);
  set = controller.SetRoute(Route({Group(10, ab), Group(20, {sites[2]})}));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  int a0 = a.hits(), c0 = c.hits();
  wait_sent(200);
  EXPECT_NEAR(c.hits() - c0, 2 * (a.hits() - a0), 12);
  // c leaves: once SetRoute returns, the proxy drained it.
  set = controller.SetRoute(Route({Group(10, ab)}));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(c.in_flight(), 0);
  int c_after = c.hits();
  wait_sent(200);
  stop = true;
  for (std::thread& t : load) t.join();
  router.join();
  EXPECT_EQ(failed, 0);
  // Two reloads with four clients: at most one retry per client and reload.
  EXPECT_LE(retried, 8) << sent << " sent";
  EXPECT_EQ(c.hits(), c_after);
  EXPECT_EQ(
      k8s::Annotation(
          *server.Get("/api/v1/namespaces/migserve-replicas/pods/proxy-0"),
          k8s::kAnnotationProxyGeneration),
      "3");
  // What /metrics says of it: generation 3 over a and b, at least the three
  // changes applied (a fourth, the empty configuration, if the router's
  // first sync came before the first routes). A sync may fail on a busy
  // machine (an apply that waits too long) and be tried again: not counted.
  const std::string metrics = plane.Metrics();
  for (const char* line :
       {"migserve_router_route_generation 3\n", "migserve_router_services 1\n",
        "migserve_router_replicas 2\n", "migserve_router_nginx_up 1\n"}) {
    EXPECT_NE(metrics.find(line), std::string::npos) << line << metrics;
  }
  EXPECT_EQ(
      testing::CountMatches(metrics, "\nmigserve_router_applies_total [34]\n"),
      1)
      << metrics;
  EXPECT_TRUE(plane.Health().ok());
  EXPECT_EQ(unrecorded, std::vector<std::string>{});
  int applied_events = 0;
  for (const json& e :
       server.List("/api/v1/namespaces/migserve-replicas/events")) {
    EXPECT_EQ(e["involvedObject"]["name"], "proxy-0");
    if (e["reason"] == "RoutesApplied") ++applied_events;
  }
  EXPECT_GE(applied_events, 3);
}

// A data plane the router cannot keep up: /healthz says why, /metrics
// counts it, and both recover once it is back.
TEST_F(ControlPlaneServerTest, ADeadNginxIsUnhealthyAndCounted) {
  std::atomic<bool> down{true};
  ControlPlaneOptions options;
  options.namespace_ = "ns";
  std::vector<std::string> events;  // "Type Reason: message"
  options.event = [&](EventType type, const std::string& reason,
                      const std::string& message) {
    events.push_back(
        fmt::format("{} {}: {}", EventTypeName(type), reason, message));
  };
  options.supervise = [&] {
    return down ? Status::Unavailable("nginx (pid 7) is dead; restart failed")
                : Status::Ok();
  };
  ControlPlane plane(client.get(), options,
                     [](const ProxyConfig&) { return Status::Ok(); });
  std::atomic<bool> stop{false};
  std::thread router([&] { plane.Run(stop, 1); });
  auto wait = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 300 && !done(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  };
  EXPECT_TRUE(wait([&] { return !plane.Health().ok(); }));
  EXPECT_EQ(plane.Health().message(), "nginx (pid 7) is dead; restart failed");
  EXPECT_NE(plane.Metrics().find("migserve_router_nginx_up 0\n"),
            std::string::npos);
  down = false;
  // Supervised about every second.
  EXPECT_TRUE(wait([&] { return plane.Health().ok(); }));
  stop = true;
  router.join();
  const std::string metrics = plane.Metrics();
  EXPECT_NE(metrics.find("migserve_router_nginx_up 1\n"), std::string::npos)
      << metrics;
  EXPECT_EQ(testing::CountMatches(
                metrics, "\nmigserve_router_nginx_problems_total [1-9]\n"),
            1)
      << metrics;
  // Once down, once back, however many checks found it down; and the
  // empty configuration applied.
  EXPECT_EQ(events, (std::vector<std::string>{
                        "Warning NginxDown: nginx (pid 7) is dead; restart "
                        "failed",
                        "Normal RoutesApplied: route generation 0: 0 "
                        "services, 0 replicas",
                        "Normal NginxRecovered: nginx answers again"}));
}

}  // namespace
}  // namespace migserve::proxy
