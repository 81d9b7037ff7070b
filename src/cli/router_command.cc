// migserve router [--nginx PATH] [--listen ADDR] [--grpc-listen ADDR]
//                 [--run-dir DIR] [--metrics-port N] [--metrics-address A]
//                 [--pod NAME] [--drain-timeout S] [--kubeconfig F]
// migserve router --render -d DEPLOYMENT --replicas CSV [-o FILE]
// The proxy's control plane (docs/serving.md, "The proxy"): runs nginx and
// keeps it serving the controller's routes over the Ready replica pods.
// With --render it writes the nginx configuration a deployment's routes
// give over a list of replica addresses instead, with no Kubernetes API,
// for a person to review or a test to run.
#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <set>

#include "boundary/input_file.h"
#include "cli/command.h"
#include "cli/kube_flags.h"
#include "cluster/cluster_state.h"
#include "cluster/routing.h"
#include "deployment/deployment_json.h"
#include "deployment/validator.h"
#include "kube/event_recorder.h"
#include "kubernetes/export.h"
#include "proxy/control_plane.h"
#include "proxy/nginx_config.h"
#include "proxy/nginx_process.h"
#include "proxy/replica_addresses.h"
#include "util/interrupt.h"
#include "util/status_server.h"

namespace migserve::cli {
namespace {

namespace k8s = kubernetes;

struct RouterFlags {
  KubeFlags kube;
  std::string nginx = "/usr/sbin/nginx";
  std::string listen = "0.0.0.0:8080";
  // Unless given, gRPC is served on --listen's address (a proxy kept on
  // loopback does not open a port to the network), port 8001.
  std::optional<std::string> grpc_listen;
  std::string run_dir = "/tmp/migserve-proxy";
  std::string pod;
  int workers = 0;
  double drain_timeout_s = 30;
  bool render = false;
  std::string deployment;
  std::string replicas;
  std::string output;
  int metrics_port = -1;
  std::string metrics_address = "127.0.0.1";
  int llm_idle_timeout_s = 3600;
  std::string llm_balancing = "affinity";
};

StatusOr<proxy::NginxSetup> SetupOf(const RouterFlags& flags) {
  proxy::NginxSetup setup;
  StatusOr<Endpoint> listen = Endpoint::ParseListen(flags.listen);
  if (!listen.ok()) return listen.status().WithPrefix("--listen");
  setup.listen = *listen;
  if (!flags.grpc_listen) {
    MIGSERVE_ASSIGN_OR_RETURN(setup.grpc_listen, listen->AtPort(8001));
  } else if (!flags.grpc_listen->empty()) {
    StatusOr<Endpoint> grpc = Endpoint::ParseListen(*flags.grpc_listen);
    if (!grpc.ok()) return grpc.status().WithPrefix("--grpc-listen");
    setup.grpc_listen = *grpc;
  }
  StatusOr<ConfigWord> run_dir = ConfigWord::Parse(flags.run_dir);
  if (!run_dir.ok()) return run_dir.status().WithPrefix("--run-dir");
  setup.prefix = *run_dir;
  setup.worker_processes = flags.workers;
  MIGSERVE_ASSIGN_OR_RETURN(setup.drain_timeout,
                            Duration::Of(flags.drain_timeout_s));
  MIGSERVE_ASSIGN_OR_RETURN(setup.llm_idle_timeout,
                            Duration::Of(flags.llm_idle_timeout_s));
  setup.llm_affinity = flags.llm_balancing == "affinity";
  return setup;
}

// A row at a site where the deployment has no replica of its service
// would be silently unused: a typo in a name or a place.
Status CheckEveryRowIsAReplica(const proxy::ReplicaBackends& backends,
                               const k8s::ProxyRoutes& routes,
                               const RouterFlags& flags) {
  std::set<proxy::ReplicaBackends::Site> replicas;
  for (const auto& [service, route] : routes.services) {
    for (const cluster::RouteGroup& g : route.route.groups) {
      for (const cluster::ReplicaSite& m : g.members) {
        replicas.insert({service, m});
      }
    }
  }
  for (const auto& [at, backend] : backends.by_site) {
    if (replicas.count(at)) continue;
    const cluster::ReplicaSite& site = at.second;
    return Status::InvalidArgument(fmt::format(
        "{}: {} at {} GPU {} start {} is no replica of {}", flags.replicas,
        at.first, site.gpu.node, site.gpu.index, site.start, flags.deployment));
  }
  return Status::Ok();
}

Status RenderConfig(const RouterFlags& flags, CommandContext* context) {
  if (flags.deployment.empty() || flags.replicas.empty()) {
    return Status::InvalidArgument(
        "--render: needs -d DEPLOYMENT and --replicas CSV");
  }
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment d,
                            deployment::LoadDeployment(flags.deployment));
  // The routes are weighted by what each replica declares: one that no
  // measurement or model bears out is refused (issue 92).
  MIGSERVE_RETURN_IF_ERROR(deployment::CheckReplicaServices(d));
  MIGSERVE_RETURN_IF_ERROR(deployment::CheckDeclaredCredits(d, nullptr));
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState state,
                            cluster::ClusterFromDeployment(d, {}));
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(flags.replicas));
  MIGSERVE_ASSIGN_OR_RETURN(proxy::ReplicaBackends backends,
                            proxy::ParseReplicaAddresses(text, flags.replicas));
  k8s::ServingSpec spec;
  spec.KindsFrom(d.services);
  k8s::ProxyRoutes routes =
      k8s::ProxyRoutesOf(state, k8s::ModelsOf(state), spec);
  MIGSERVE_RETURN_IF_ERROR(CheckEveryRowIsAReplica(backends, routes, flags));
  proxy::ProxyConfig config = proxy::ConfigOf(routes, backends);
  int members = 0;
  int reached = 0;
  for (const auto& [service, route] : routes.services) {
    for (const cluster::RouteGroup& g : route.route.groups) {
      if (g.weight > 0) members += static_cast<int>(g.members.size());
    }
  }
  for (const proxy::ProxyUpstream& u : config.upstreams) {
    reached += static_cast<int>(u.backends.size());
  }
  if (reached < members) {
    context->err << fmt::format(
                        "router: {} of {} routed replicas have no address in "
                        "{}; they are left out",
                        members - reached, members, flags.replicas)
                 << std::endl;
  }
  MIGSERVE_ASSIGN_OR_RETURN(const proxy::NginxSetup setup, SetupOf(flags));
  const std::string rendered = proxy::RenderNginxConfig(config, setup);
  if (proxy::NeedsOpenAiScript(config)) {
    context->err << fmt::format(
                        "router: the language models' services need nginx's "
                        "JavaScript module; the script the configuration "
                        "imports is {}",
                        proxy::OpenAiScriptPath(setup))
                 << std::endl;
  }
  // The configuration imports the script from the run directory, where
  // `migserve router` keeps it too: the two are written as one set, so a
  // failure leaves the old pair (a new script beside an old configuration
  // sets a variable the old one does not declare).
  if (flags.output.empty() || flags.output == "-") {
    MIGSERVE_RETURN_IF_ERROR(proxy::WriteOpenAiScript(config, setup));
    return context->Emit(flags.output, rendered);
  }
  if (WasRead(flags.output)) return OutputIsAnInput(flags.output);
  return proxy::WriteOpenAiScript(config, setup, {{flags.output, rendered}});
}

Status RunRouter(RouterFlags flags, CommandContext* context) {
  if (flags.render) return RenderConfig(flags, context);
  if (flags.pod.empty()) {
    if (const char* env = std::getenv("POD_NAME")) flags.pod = env;
  }
  MIGSERVE_ASSIGN_OR_RETURN(kube::KubeConfig config, LoadKube(flags.kube));
  kube::KubeClient client(config);
  MIGSERVE_ASSIGN_OR_RETURN(proxy::NginxSetup setup, SetupOf(flags));
  // Until the first routes are read, every model path answers 404.
  MIGSERVE_ASSIGN_OR_RETURN(
      std::unique_ptr<proxy::NginxProcess> nginx,
      proxy::NginxProcess::Start(flags.nginx, setup, {0, {}}));
  proxy::ControlPlaneOptions options;
  options.namespace_ = config.namespace_;
  options.pod = flags.pod;
  options.log = [context](const std::string& line) {
    context->err << line << std::endl;
  };
  options.supervise = [&nginx, log = options.log] {
    return nginx->Supervise(log);
  };
  // Events about its own pod, where `kubectl describe` shows them.
  std::optional<kube::EventRecorder> events;
  if (!flags.pod.empty()) {
    events.emplace(&client,
                   nlohmann::json{{"apiVersion", "v1"},
                                  {"kind", "Pod"},
                                  {"name", flags.pod},
                                  {"namespace", config.namespace_}},
                   "migserve-router");
    options.event = events->Sink(options.log);
  }
  proxy::ControlPlane plane(&client, options,
                            [&](const proxy::ProxyConfig& next) {
                              return nginx->ApplyAndDrain(next);
                            });
  StatusServer server;
  if (flags.metrics_port >= 0) {
    server.Page("/metrics", "text/plain; version=0.0.4",
                [&plane] { return plane.Metrics(); });
    server.Health([&plane] { return plane.Health(); });
    MIGSERVE_RETURN_IF_ERROR(
        server.Start(flags.metrics_address, flags.metrics_port)
            .WithPrefix("--metrics-port"));
  }
  context->err << fmt::format("router: nginx on {} (pid {}), reporting to {}",
                              flags.listen, nginx->pid(),
                              flags.pod.empty() ? std::string("no pod")
                                                : "pod " + flags.pod)
               << std::endl;
  InstallInterruptHandlers();
  plane.Run(InterruptFlag());
  return Status::Ok();
}

// --render and what it reads and writes.
void AddRenderOptions(CLI::App* app, RouterFlags* flags) {
  app->add_flag("--render", flags->render,
                "Write the nginx configuration of a deployment's routes over "
                "--replicas and exit (no Kubernetes API)");
  app->add_option("-d,--deployment", flags->deployment,
                  "--render: the deployment (JSON)");
  app->add_option("--replicas", flags->replicas,
                  "--render: CSV service,node,gpu,start,address,port"
                  "[,grpc_port], one row per replica");
  app->add_option("-o,--output", flags->output,
                  "--render: where to write it (default: stdout)");
}

}  // namespace

void SetupRouter(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<RouterFlags>();
  AddKubeOptions(app, &flags->kube);
  app->add_option("--nginx", flags->nginx, "The nginx binary to run")
      ->capture_default_str();
  app->add_option("--listen", flags->listen,
                  "Address:port the proxy serves requests on")
      ->capture_default_str();
  app->add_option("--grpc-listen", flags->grpc_listen,
                  "Address:port the proxy serves gRPC (HTTP/2) on; \"\": none")
      ->default_str("--listen's address, port 8001");
  app->add_option("--run-dir", flags->run_dir,
                  "Where nginx's configuration, pid and logs go")
      ->capture_default_str();
  app->add_option("--pod", flags->pod,
                  "This proxy's pod, where the applied route generation is "
                  "reported (default: $POD_NAME)");
  app->add_option("--workers", flags->workers,
                  "nginx worker processes (0: one per core)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app->add_option("--drain-timeout", flags->drain_timeout_s,
                  "Seconds an old nginx worker may finish its requests "
                  "after a change, and the router waits for it before it "
                  "reports the change applied (a language model's streams "
                  "run on in old workers up to --llm-idle-timeout)")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  app->add_option("--metrics-port", flags->metrics_port,
                  "Port of /metrics and /healthz (0: any free; -1: none)")
      ->check(CLI::Range(-1, 65535))
      ->capture_default_str();
  app->add_option("--metrics-address", flags->metrics_address,
                  "Address of /metrics and /healthz (the export's proxy "
                  "gives the pod's IP)")
      ->capture_default_str();
  app->add_option("--llm-idle-timeout", flags->llm_idle_timeout_s,
                  "Seconds a language model's streamed answer may go without "
                  "a byte before the proxy ends it")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app->add_option("--llm-balancing", flags->llm_balancing,
                  "How a language model's requests are spread where its "
                  "service's credits count prefix-cache hits: affinity (a "
                  "conversation keeps to the replica holding its prefix, "
                  "each replica up to its batch in flight) or least-conn "
                  "(the fewest in flight per credit, as for the others)")
      ->check(CLI::IsMember({"affinity", "least-conn"}))
      ->capture_default_str();
  AddRenderOptions(app, flags.get());
  OnRun(app, context, [flags, context] { return RunRouter(*flags, context); });
}

}  // namespace migserve::cli
