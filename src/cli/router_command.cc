// migserve router [--nginx PATH] [--listen ADDR] [--grpc-listen ADDR]
//                 [--run-dir DIR]
//                 [--pod NAME] [--drain-timeout S] [--kubeconfig F]
// The proxy's control plane (docs/serving.md, "The proxy"): runs nginx and
// keeps it serving the controller's routes over the Ready replica pods.
#include <fmt/format.h>

#include <cstdlib>

#include "cli/command.h"
#include "cli/kube_flags.h"
#include "proxy/control_plane.h"
#include "proxy/nginx_process.h"
#include "util/interrupt.h"

namespace migserve::cli {
namespace {

struct RouterFlags {
  KubeFlags kube;
  std::string nginx = "/usr/sbin/nginx";
  std::string listen = "0.0.0.0:8080";
  std::string grpc_listen = "0.0.0.0:8001";
  std::string run_dir = "/tmp/migserve-proxy";
  std::string pod;
  int workers = 0;
  double drain_timeout_s = 30;
};

Status RunRouter(RouterFlags flags, CommandContext* context) {
  if (flags.pod.empty()) {
    if (const char* env = std::getenv("POD_NAME")) flags.pod = env;
  }
  MIGSERVE_ASSIGN_OR_RETURN(kube::KubeConfig config, LoadKube(flags.kube));
  kube::KubeClient client(config);
  proxy::NginxSetup setup;
  setup.listen = flags.listen;
  setup.grpc_listen = flags.grpc_listen;
  setup.prefix = flags.run_dir;
  setup.worker_processes = flags.workers;
  setup.drain_timeout_s = static_cast<int>(flags.drain_timeout_s);
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
  proxy::ControlPlane plane(&client, options,
                            [&](const proxy::ProxyConfig& next) {
                              return nginx->ApplyAndDrain(next);
                            });
  context->err << fmt::format("router: nginx on {} (pid {}), reporting to {}",
                              flags.listen, nginx->pid(),
                              flags.pod.empty() ? std::string("no pod")
                                                : "pod " + flags.pod)
               << std::endl;
  InstallInterruptHandlers();
  plane.Run(InterruptFlag());
  return Status::Ok();
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
      ->capture_default_str();
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
                  "after a change")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  OnRun(app, context, [flags, context] { return RunRouter(*flags, context); });
}

}  // namespace migserve::cli
