// The router's keepers, HTTPRoutes and group Services on the stand-in API
// server.
#include "kubernetes/routing/kubernetes_router.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kube/testing/api_server_standin.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/routing/proxy_routes.h"
#include "kubernetes/routing/routing_objects.h"
#include "kubernetes/testing/memory_pod_ledger.h"

namespace migserve::kubernetes {
namespace {

constexpr char kServices[] = "/api/v1/namespaces/default/services";

// A group of `service` on 1g.10gb replicas of batch `batch` credited
// `credit` req/s.
RouteGroup Group(double credit, int batch = 1) {
  RouteGroup g;
  g.gpu_model = "A100-SXM4-80GB";
  g.profile = "1g.10gb";
  g.batch = batch;
  g.replicas = 2;
  g.credit = credit;
  g.weight = 10;
  return g;
}

class KubernetesRouterTest : public ::testing::Test {
 protected:
  KubernetesRouterTest() : server_({"", "", "", 1}) {
    EXPECT_TRUE(server_.Start().ok());
    config_.server = server_.url();
    client_ = std::make_unique<kube::KubeClient>(config_);
    RouterOptions options;
    options.serving.gateway = GatewayRef{"gw", "", ""};
    router_ = std::make_unique<KubernetesRouter>(client_.get(), options);
  }

  // Routes `service` to `groups` and returns the names of the group
  // Services that exist afterwards.
  std::set<std::string> Route(const std::string& service,
                              const std::vector<RouteGroup>& groups) {
    EXPECT_TRUE(router_->SetRoute({service, groups}).ok());
    std::set<std::string> names;
    for (const nlohmann::json& s : server_.List(kServices)) {
      names.insert(s["metadata"]["name"].get<std::string>());
    }
    return names;
  }
  // One group of batch b credited 5 req/s per batch given.
  std::set<std::string> RouteBatches(const std::string& service,
                                     const std::vector<int>& batches) {
    std::vector<RouteGroup> groups;
    for (int b : batches) groups.push_back(Group(5, b));
    return Route(service, groups);
  }

  // The name of the Service of `service`'s slot of batch `batch`.
  std::string Slot(const std::string& service, int batch) {
    return SlotName(service, Group(5, batch));
  }
  // The live HTTPRoute of `service`'s backends: the group label each
  // one's Service selects -> its name.
  std::map<std::string, std::string> Backends(const std::string& service) {
    std::map<std::string, std::string> out;
    auto route = server_.Get(
        "/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/" +
        service);
    EXPECT_TRUE(route);
    if (!route) return out;
    for (const nlohmann::json& b :
         (*route)["spec"]["rules"][0]["backendRefs"]) {
      std::string name = b["name"];
      auto selected = server_.Get(std::string(kServices) + "/" + name);
      EXPECT_TRUE(selected) << name;
      if (selected) out[(*selected)["spec"]["selector"][kLabelGroup]] = name;
    }
    return out;
  }

  kube::ApiServerStandIn server_;
  kube::KubeConfig config_;
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<KubernetesRouter> router_;
};

// A group Service lives while the route names it and through the next
// route change (the gateway may still send to it until it applies the
// change), and is deleted at the change after that; another service's
// Services are not touched.
TEST_F(KubernetesRouterTest,
       DeletesGroupServicesTwoRouteChangesAfterTheirLast) {
  EXPECT_EQ(RouteBatches("other", {5}), (std::set{Slot("other", 5)}));
  EXPECT_EQ(RouteBatches("a", {1, 2}),
            (std::set{Slot("other", 5), Slot("a", 1), Slot("a", 2)}));
  EXPECT_EQ(RouteBatches("a", {2, 3}), (std::set{Slot("other", 5), Slot("a", 1),
                                                 Slot("a", 2), Slot("a", 3)}));
  EXPECT_EQ(RouteBatches("a", {3, 4}), (std::set{Slot("other", 5), Slot("a", 2),
                                                 Slot("a", 3), Slot("a", 4)}));
  // The same route again writes nothing and deletes nothing.
  EXPECT_EQ(RouteBatches("a", {3, 4}), (std::set{Slot("other", 5), Slot("a", 2),
                                                 Slot("a", 3), Slot("a", 4)}));
  EXPECT_EQ(RouteBatches("a", {4}),
            (std::set{Slot("other", 5), Slot("a", 3), Slot("a", 4)}));
  // A group that comes back after its Service was deleted gets it again.
  EXPECT_EQ(RouteBatches("a", {1, 4}),
            (std::set{Slot("other", 5), Slot("a", 1), Slot("a", 4)}));
}

// A credit's change keeps the Service's name (issue 75: the name carried
// the credit, so a changed SLO or profile row renamed the Service under
// dashboards, NetworkPolicies and alerts). While both credits are routed
// the new group is on its own group name; once the live route no longer
// sends to the old group the slot's Service selects the new one and the
// route names it again, and the group name goes a change later.
TEST_F(KubernetesRouterTest, AServiceKeepsItsSlotsNameThroughACreditChange) {
  const RouteGroup old_credit = Group(241.1), new_credit = Group(236.0);
  const std::string slot = SlotName("a", old_credit);
  ASSERT_EQ(slot, SlotName("a", new_credit));
  const std::string was = GroupName("a", old_credit);
  const std::string next = GroupName("a", new_credit);
  EXPECT_EQ(Route("a", {old_credit}), (std::set{slot}));
  EXPECT_EQ(Backends("a"), (std::map<std::string, std::string>{{was, slot}}));
  // Both credits routed (a transition): the slot stays with the group the
  // gateway sends its share to.
  EXPECT_EQ(Route("a", {old_credit, new_credit}), (std::set{slot, next}));
  EXPECT_EQ(Backends("a"),
            (std::map<std::string, std::string>{{was, slot}, {next, next}}));
  // The old credit's replicas leave the route: the slot's Service, which
  // still selects them, is named by no route for a change.
  EXPECT_EQ(Route("a", {new_credit}), (std::set{slot, next}));
  EXPECT_EQ(Backends("a"), (std::map<std::string, std::string>{{next, next}}));
  // The next route change (here the same route asked again) points the
  // slot at the new credit's replicas and names it.
  EXPECT_EQ(Route("a", {new_credit}), (std::set{slot, next}));
  EXPECT_EQ(Backends("a"), (std::map<std::string, std::string>{{next, slot}}));
  // Settled: nothing to write; the group name goes at the next change.
  EXPECT_EQ(Route("a", {new_credit}), (std::set{slot, next}));
  RouteGroup more = new_credit;
  more.replicas = 3;
  more.weight = 15;
  EXPECT_EQ(Route("a", {more}), (std::set{slot}));
  EXPECT_EQ(Backends("a"), (std::map<std::string, std::string>{{next, slot}}));
}

// A route written straight into the routes ConfigMap with a name that is
// not plain never reaches the proxy's configuration: reading the map fails
// naming the field (the router then keeps its last good configuration).
TEST(ProxyRoutesTest, ANameThatIsNotPlainIsRefused) {
  for (const auto& [field, value] :
       {std::pair<std::string, std::string>{"model", "m; } location / {"},
        {"model", "m\ninclude /etc/nginx/x;"},
        {"model", std::string(300, 'm')}}) {
    nlohmann::json route = {
        {"service", "s"}, {field, value}, {"groups", nlohmann::json::array()}};
    nlohmann::json map = {
        {"data", {{"generation", "2"}, {"route.s", route.dump()}}}};
    auto read = ParseProxyRoutes(map);
    ASSERT_FALSE(read.ok()) << value;
    EXPECT_NE(read.status().message().find(
                  "data.route.s: model: must be 1 to 63 letters"),
              std::string::npos)
        << read.status().message();
  }
  nlohmann::json good = {
      {"service", "s"}, {"model", "m"}, {"groups", nlohmann::json::array()}};
  EXPECT_TRUE(ParseProxyRoutes(
                  {{"data", {{"generation", "2"}, {"route.s", good.dump()}}}})
                  .ok());
}

// The keepers follow the serving spec and the data plane: none without a
// gateway or a proxy; with the proxy's plane alone, the routes ConfigMap and
// no HTTPRoute; with both, both.
// A stand-in API server and its administrator's client.
class KubernetesRouterKeepersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server.Start().ok());
    kube::KubeConfig config;
    config.server = server.url();
    holder_ = std::make_unique<kube::KubeClient>(config);
    client = holder_.get();
  }

  kube::ApiServerStandIn server{{"", "", "", 1}};
  kube::KubeClient* client = nullptr;

 private:
  std::unique_ptr<kube::KubeClient> holder_;
};

TEST_F(KubernetesRouterKeepersTest, OneKeeperPerGatewayAndDataPlane) {
  constexpr char kRoutes[] =
      "/apis/gateway.networking.k8s.io/v1/namespaces/"
      "default/httproutes";
  constexpr char kConfigMap[] =
      "/api/v1/namespaces/default/configmaps/migserve-proxy-routes";
  ServiceRoute route{"s", {Group(5)}};

  RouterOptions options;
  EXPECT_FALSE(KubernetesRouter(client, options).KeepsRoutes());
  options.plane = queueing::DataPlane::kProxy;
  KubernetesRouter proxy(client, options);
  ASSERT_TRUE(proxy.KeepsRoutes());
  auto set = proxy.SetRoute(route);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_TRUE(*set);
  EXPECT_TRUE(server.Get(kConfigMap));
  EXPECT_TRUE(server.List(kRoutes).empty());

  options.serving.gateway = GatewayRef{"gw", "", ""};
  KubernetesRouter both(client, options);
  set = both.SetRoute(route);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_TRUE(*set);  // the HTTPRoute is new; the ConfigMap held already
  EXPECT_EQ(server.List(kRoutes).size(), 1u);
  set = both.SetRoute(route);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_FALSE(*set);
}

// The controller's route changes keep a language model's service on the
// OpenAI API (they wrote every route as KServe v2 before: the first change
// on a live cluster cut its chat completions off).
TEST_F(KubernetesRouterKeepersTest, ALanguageModelsRouteStaysOpenAi) {
  RouterOptions options;
  options.plane = queueing::DataPlane::kProxy;
  options.serving.kinds["chat"] = *workload::ParseServiceKind("llm");
  options.serving.llm_models["chat"] = std::shared_ptr<const llm::LlmModel>(
      llm::SharedShippedLlmModels(),
      *llm::ShippedLlmModels().Find("qwen2.5-7b"));
  options.models["chat"] = "qwen2.5-7b";
  KubernetesRouter router(client, options);
  ASSERT_TRUE(router.SetRoute({"chat", {Group(5)}}).ok());
  ASSERT_TRUE(router.SetRoute({"vision", {Group(5)}}).ok());
  auto map =
      server.Get("/api/v1/namespaces/default/configmaps/migserve-proxy-routes");
  ASSERT_TRUE(map);
  auto routes = ParseProxyRoutes(*map);
  ASSERT_TRUE(routes.ok()) << routes.status().ToString();
  EXPECT_TRUE(routes->services["chat"].openai);
  EXPECT_FALSE(routes->services["vision"].openai);
  // The names its vLLM replicas answer to besides the service and its
  // model ride with the route (issue 89), read back as written.
  std::vector<std::string> aliases;
  for (const ServedName& a : routes->services["chat"].aliases) {
    aliases.push_back(a.str());
  }
  std::string model = routes->services["chat"].model;
  EXPECT_EQ(model, "qwen2.5-7b");
  EXPECT_EQ(aliases, (std::vector<std::string>{"Qwen/Qwen2.5-7B",
                                               "Qwen/Qwen2.5-7B-Instruct"}));
  EXPECT_TRUE(routes->services["vision"].aliases.empty());
  nlohmann::json route = {{"service", "chat"},
                          {"model", model},
                          {"api", "openai"},
                          {"aliases", nlohmann::json::array({"a b"})},
                          {"groups", nlohmann::json::array()}};
  auto bad = ParseProxyRoutes(
      {{"data", {{"generation", "2"}, {"route.chat", route.dump()}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("data.route.chat: aliases[0]: must be "
                                        "1 to 128 letters"),
            std::string::npos)
      << bad.status().message();
}

// A generation is a whole number the routes can grow from (issue 92: one
// past 2^63 was clamped in silence, and then never grew).
TEST(ProxyGenerationTest, AGenerationOutOfRangeIsRefusedNotClamped) {
  auto of = [](const std::string& text) {
    return ParseProxyGeneration({{"data", {{"generation", text}}}});
  };
  EXPECT_EQ(of("9223372036854775807").value(), 9223372036854775807L);
  EXPECT_EQ(of("0").value(), 0);
  for (const char* bad : {"9223372036854775808", "99999999999999999999", "-1",
                          "+5", " 5", "5x", ""}) {
    auto refused = of(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find(
                  "is not a generation (a whole number from 0 to "
                  "9223372036854775807)"),
              std::string::npos)
        << refused.status().message();
  }
}

// A language model's service whose credits count prefix-cache hits keeps
// its conversations on their replicas at the proxy (issue 89): the route
// says so ("affinity": true) and reads back so; one whose credits count
// none, and a DNN service, do not.
TEST_F(KubernetesRouterKeepersTest,
       ARouteSaysWhereConversationsKeepToReplicas) {
  RouterOptions options;
  options.plane = queueing::DataPlane::kProxy;
  for (const char* service : {"chat", "cold"}) {
    options.serving.kinds[service] = *workload::ParseServiceKind("llm");
    options.models[service] = "qwen2.5-7b";
  }
  llm::LlmTerms terms{2000, 100, 1000, 100};
  options.serving.tokens["cold"] = terms;
  terms.prefix_cache_hit_rate = 0.5;
  options.serving.tokens["chat"] = terms;
  KubernetesRouter router(client, options);
  for (const char* service : {"chat", "cold", "vision"}) {
    ASSERT_TRUE(router.SetRoute({service, {Group(5)}}).ok()) << service;
  }
  auto map =
      server.Get("/api/v1/namespaces/default/configmaps/migserve-proxy-routes");
  ASSERT_TRUE(map);
  EXPECT_EQ(nlohmann::json::parse(
                (*map)["data"]["route.chat"].get<std::string>())["affinity"],
            true);
  auto routes = ParseProxyRoutes(*map);
  ASSERT_TRUE(routes.ok()) << routes.status().ToString();
  EXPECT_TRUE(routes->services["chat"].affinity);
  EXPECT_FALSE(routes->services["cold"].affinity);
  EXPECT_FALSE(routes->services["vision"].affinity);
}

// Both keepers carry their controller's lease epoch on what they write, and
// a controller with an older epoch (one replaced while it stalled) writes
// over neither (issue 72): the newer one's routes stay.
TEST_F(KubernetesRouterKeepersTest, AnOlderEpochWritesOverNoRoute) {
  constexpr char kRoute[] =
      "/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/s";
  constexpr char kConfigMap[] =
      "/api/v1/namespaces/default/configmaps/migserve-proxy-routes";
  RouterOptions options;
  options.plane = queueing::DataPlane::kProxy;
  options.serving.gateway = GatewayRef{"gw", "", ""};
  options.epoch = 2;
  ASSERT_TRUE(
      KubernetesRouter(client, options).SetRoute({"s", {Group(5)}}).ok());
  for (const char* path : {kRoute, kConfigMap}) {
    auto written = server.Get(path);
    ASSERT_TRUE(written) << path;
    EXPECT_EQ(EpochOf(*written).value(), 2) << path;
  }
  EXPECT_EQ(ParseProxyRoutes(*server.Get(kConfigMap))->epoch, 2);
  options.epoch = 1;
  auto stale = KubernetesRouter(client, options).SetRoute({"s", {Group(7)}});
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(stale.status().message(),
            "fenced: the HTTPRoute of s: written by a controller holding the "
            "lease at epoch 2; this one holds epoch 1 and writes nothing "
            "more");
  options.serving.gateway.reset();  // the proxy's routes alone
  stale = KubernetesRouter(client, options).SetRoute({"s", {Group(7)}});
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.status().message().find(
                "fenced: the proxy's routes: written by a controller holding "
                "the lease at epoch 2"),
            std::string::npos)
      << stale.status().message();
  EXPECT_EQ(ParseProxyRoutes(*server.Get(kConfigMap))->epoch, 2);
  options.serving.gateway = GatewayRef{"gw", "", ""};
  // A newer one writes.
  options.plane = queueing::DataPlane::kProxy;
  options.epoch = 3;
  EXPECT_TRUE(
      KubernetesRouter(client, options).SetRoute({"s", {Group(7)}}).ok());
  EXPECT_EQ(EpochOf(*server.Get(kRoute)).value(), 3);
}

// A route write on the wire when its writer's Lease lapses (issue 91: a
// deposed leader's merge patch, held past the Lease, landed after its
// successor's writes and routed a service at 0; nothing repaired it): the
// write is conditional at the API server on the route being as its writer
// read it, so the successor's stays. Here the old leader's write is
// "held" by its client's fence hook, which runs the successor's whole
// write between the old one's read and its patch.
TEST_F(KubernetesRouterKeepersTest, ARouteWriteHeldPastTheLeaseDoesNotLand) {
  constexpr char kRoute[] =
      "/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/s";
  RouterOptions options;
  options.serving.gateway = GatewayRef{"gw", "", ""};
  options.epoch = 1;
  ASSERT_TRUE(
      KubernetesRouter(client, options).SetRoute({"s", {Group(5)}}).ok());
  kube::KubeConfig config;
  config.server = server.url();
  kube::KubeClient old_client(config);
  kube::KubeClient new_client(config);
  RouterOptions successor = options;
  successor.epoch = 2;
  bool held = false;
  old_client.SetFence([&] {
    if (!held) {
      held = true;  // the successor writes while this write is held
      EXPECT_TRUE(KubernetesRouter(&new_client, successor)
                      .SetRoute({"s", {Group(9, 2)}})
                      .ok());
    }
    return Status::Ok();
  });
  auto stale = KubernetesRouter(&old_client, options)
                   .SetRoute({"s", {Group(5), Group(3, 4)}});
  EXPECT_TRUE(held);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), Status::Code::kFailedPrecondition)
      << stale.status().ToString();
  EXPECT_NE(stale.status().message().find("fenced: the HTTPRoute of s"),
            std::string::npos)
      << stale.status().message();
  auto live = server.Get(kRoute);
  ASSERT_TRUE(live);
  EXPECT_EQ(EpochOf(*live).value(), 2);
  // The successor's route: its one group's Service, batch 2.
  const nlohmann::json& refs = (*live)["spec"]["rules"][0]["backendRefs"];
  ASSERT_EQ(refs.size(), 1u) << refs;
  EXPECT_EQ(refs[0]["name"], SlotName("s", Group(9, 2))) << refs;
}

// The routes name each member's pod by the uid the controller's ledger
// holds, and not a pod that copied its labels.
TEST(ProxyRouterTest, RoutesNameTheControllersPodsByUid) {
  kube::ApiServerStandIn server({"", "", "", 1});
  ASSERT_TRUE(server.Start().ok());
  kube::KubeConfig config;
  config.server = server.url();
  kube::KubeClient client(config);
  auto pod = [&](const std::string& name) {
    nlohmann::json object = {
        {"metadata",
         {{"name", name},
          {"labels",
           {{kManagedBy, kManager},
            {kLabelService, "s"},
            {kLabelNode, "n"},
            {kLabelGpu, "0"},
            {kLabelStart, "0"}}}}},
        {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}};
    auto created = client.Create("/api/v1/namespaces/default/pods", object);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? (*created)["metadata"]["uid"].get<std::string>()
                        : std::string();
  };
  std::string forged = pod("a-forged");
  std::string real = pod("s-n-0-0");
  ASSERT_NE(real, forged);
  MemoryPodLedger ledger;
  ledger.entries["s-n-0-0"] = {"token", real};
  RouterOptions options;
  options.plane = queueing::DataPlane::kProxy;
  options.ledger = &ledger;
  RouteGroup group = Group(5);
  group.members = {{{"n", 0}, 0}};
  ASSERT_TRUE(KubernetesRouter(&client, options).SetRoute({"s", {group}}).ok());
  auto map =
      server.Get("/api/v1/namespaces/default/configmaps/migserve-proxy-routes");
  ASSERT_TRUE(map);
  auto routes = ParseProxyRoutes(*map);
  ASSERT_TRUE(routes.ok()) << routes.status().ToString();
  EXPECT_EQ(routes->services["s"].uids,
            (std::map<ReplicaSite, std::string>{{{{"n", 0}, 0}, real}}));
}

}  // namespace
}  // namespace migserve::kubernetes
