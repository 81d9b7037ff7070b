#include "kubernetes/routing/proxy_objects.h"

#include <fmt/format.h>

#include "boundary/checked_name.h"
#include "cluster/routing.h"
#include "kube/yaml_writer.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/replica_pod.h"
#include "kubernetes/routing/proxy_routes.h"

namespace migserve::kubernetes {
namespace {

// The proxy's objects but the routes ConfigMap, which alone lacks the
// name label.
Json Metadata(const ServingSpec& spec) {
  kube::Labels labels = ProxyLabels();
  labels.Set(kLabelName, kube::LabelValue::Parse(kProxyName).value());
  return ObjectMetadata(ObjectLabel(kProxyName), labels, {}, spec);
}

Json RouterContainer(const ProxyExport& proxy) {
  return {
      {"name", "router"},
      {"image", proxy.image},
      {"args",
       {"router", "--listen", fmt::format("0.0.0.0:{}", kProxyPort),
        "--grpc-listen", fmt::format("0.0.0.0:{}", kProxyGrpcPort), "--run-dir",
        "/run/migserve-proxy", "--metrics-port",
        std::to_string(kProxyMetricsPort), "--metrics-address", "$(POD_IP)"}},
      {"env",
       {{{"name", "POD_NAME"},
         {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
        {{"name", "POD_IP"},
         {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}}}},
      {"ports",
       {{{"name", "http"}, {"containerPort", kProxyPort}},
        {{"name", "grpc"}, {"containerPort", kProxyGrpcPort}},
        {{"name", "metrics"}, {"containerPort", kProxyMetricsPort}}}},
      // Ready once it serves the routes: generation 0 answers 503.
      {"readinessProbe",
       {{"httpGet", {{"path", "/migserve/generation"}, {"port", "http"}}},
        {"periodSeconds", 2}}},
      // Alive while nginx listens (whatever the routes): a proxy whose
      // nginx no longer listens is restarted by its kubelet.
      {"livenessProbe",
       {{"tcpSocket", {{"port", "http"}}},
        {"initialDelaySeconds", 10},
        {"periodSeconds", 10},
        {"failureThreshold", 3}}},
      // nginx with a few workers and the router's informers; the limit
      // keeps a runaway config from taking the node's memory, and bounds
      // how many large OpenAI bodies the proxy takes at once.
      {"resources",
       {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}},
        {"limits", {{"memory", fmt::format("{}Mi", kProxyMemoryLimitMiB)}}}}},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", {"ALL"}}}}}},
      {"volumeMounts",
       {{{"name", "run"}, {"mountPath", "/run/migserve-proxy"}}}}};
}

Json ProxyDeployment(const ServingSpec& spec, const ProxyExport& proxy) {
  Json pod = {
      {"serviceAccountName", kProxyName},
      // Old workers finish their requests (--drain-timeout, 30 s) first.
      {"terminationGracePeriodSeconds", 45},
      {"securityContext",
       {{"runAsNonRoot", true},
        {"runAsUser", 65532},
        {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
      {"containers", {RouterContainer(proxy)}},
      {"volumes", {{{"name", "run"}, {"emptyDir", Json::object()}}}}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", Metadata(spec)},
          {"spec",
           {{"replicas", proxy.replicas},
            {"selector", {{"matchLabels", ProxyLabels().ToJson()}}},
            // A new proxy is Ready before an old one goes.
            {"strategy",
             {{"type", "RollingUpdate"},
              {"rollingUpdate", {{"maxUnavailable", 0}, {"maxSurge", 1}}}}},
            {"template",
             {{"metadata", {{"labels", ProxyLabels().ToJson()}}},
              {"spec", pod}}}}}};
}

// At most one proxy down at a time by a voluntary disruption (a node
// drain), so that with two or more the service keeps a proxy throughout.
Json ProxyDisruptionBudget(const ServingSpec& spec) {
  return {{"apiVersion", "policy/v1"},
          {"kind", "PodDisruptionBudget"},
          {"metadata", Metadata(spec)},
          {"spec",
           {{"maxUnavailable", 1},
            {"selector", {{"matchLabels", ProxyLabels().ToJson()}}}}}};
}

Json ProxyService(const ServingSpec& spec) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", Metadata(spec)},
          {"spec",
           {{"selector", ProxyLabels().ToJson()},
            {"ports",
             {{{"name", "http"}, {"port", 80}, {"targetPort", "http"}},
              // HTTP/2 without TLS, so that gateways and meshes carry it.
              {{"name", "grpc"},
               {"port", kProxyGrpcPort},
               {"targetPort", "grpc"},
               {"appProtocol", "kubernetes.io/h2c"}}}}}}};
}

std::vector<Json> Access(const ServingSpec& spec) {
  Json rules = {
      {{"apiGroups", {""}},
       {"resources", {"pods", "configmaps"}},
       {"verbs", {"get", "list", "watch"}}},
      // Reports the generation it applied on its own pod.
      {{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"patch"}}},
      // Events about its pod: routes applied, nginx down (docs/serving.md).
      {{"apiGroups", {""}}, {"resources", {"events"}}, {"verbs", {"create"}}}};
  Json subject = {{"kind", "ServiceAccount"}, {"name", kProxyName}};
  if (!spec.namespace_.empty()) subject["namespace"] = spec.namespace_;
  return {{{"apiVersion", "v1"},
           {"kind", "ServiceAccount"},
           {"metadata", Metadata(spec)}},
          {{"apiVersion", "rbac.authorization.k8s.io/v1"},
           {"kind", "Role"},
           {"metadata", Metadata(spec)},
           {"rules", rules}},
          {{"apiVersion", "rbac.authorization.k8s.io/v1"},
           {"kind", "RoleBinding"},
           {"metadata", Metadata(spec)},
           {"roleRef",
            {{"apiGroup", "rbac.authorization.k8s.io"},
             {"kind", "Role"},
             {"name", kProxyName}}},
           {"subjects", {subject}}}};
}

}  // namespace

std::string ProxyObjects(const ClusterState& state,
                         const std::map<std::string, std::string>& models,
                         const ServingSpec& spec, const ProxyExport& proxy,
                         const ReplicaOwners& owners) {
  ProxyRoutes routes = ProxyRoutesOf(state, models, spec);
  for (auto& [service, route] : routes.services) {
    if (auto named = owners.find(service); named != owners.end()) {
      route.owners = named->second;
    }
  }
  std::vector<Json> objects = Access(spec);
  objects.push_back(ProxyRoutesConfigMap(routes, spec.namespace_));
  objects.push_back(ProxyDeployment(spec, proxy));
  objects.push_back(ProxyDisruptionBudget(spec));
  objects.push_back(ProxyService(spec));
  return fmt::format(
             "# The proxy written by migserve export (router: proxy): {} "
             "instances of\n# `migserve router` running nginx, which sends "
             "each service's requests to\n# its replicas by smooth weighted "
             "round robin, weights = credits; the\n# controller keeps the "
             "routes ConfigMap right through transitions.\n",
             proxy.replicas) +
         kube::ToYaml(objects);
}

}  // namespace migserve::kubernetes
