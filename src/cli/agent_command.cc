// migserve agent --node NAME [--nvml-library PATH] [--kubeconfig F]
#include <cstdlib>

#include "agent/dlopen_nvml.h"
#include "agent/node_agent.h"
#include "cli/command.h"
#include "cli/kube_flags.h"
#include "kube/event_recorder.h"
#include "kubernetes/partition/dra_check.h"
#include "util/interrupt.h"

namespace migserve::cli {
namespace {

struct AgentFlags {
  KubeFlags kube;
  std::string node;
  std::string nvml_library = agent::kNvmlLibrary;
  std::string gpu;
  agent::NodeAgentOptions options;
};

Status RunAgent(AgentFlags flags, CommandContext* context) {
  if (flags.node.empty()) {
    const char* env = std::getenv("NODE_NAME");
    if (env == nullptr) {
      return Status::InvalidArgument(
          "--node: missing (or set NODE_NAME, as the DaemonSet does)");
    }
    flags.node = env;
  }
  MIGSERVE_ASSIGN_OR_RETURN(kube::KubeConfig config, LoadKube(flags.kube));
  kube::KubeClient client(config);
  // Before NVML: a node the DRA driver partitions is not the agent's.
  MIGSERVE_RETURN_IF_ERROR(
      kubernetes::CheckAgentMayPartition(&client, flags.node));
  MIGSERVE_ASSIGN_OR_RETURN(std::unique_ptr<agent::NvmlApi> nvml,
                            agent::OpenNvml(flags.nvml_library));
  MIGSERVE_ASSIGN_OR_RETURN(
      std::unique_ptr<agent::MigDriver> driver,
      agent::MigDriver::Open(nvml.get(), mig::GpuCatalog::Default(),
                             flags.gpu.empty()
                                 ? std::nullopt
                                 : std::optional<std::string>(flags.gpu)));
  flags.options.node = flags.node;
  flags.options.log = [context](const std::string& line) {
    context->err << line << std::endl;
  };
  // Events about its Node (in "default", as the kubelet's).
  kube::EventRecorder events(
      &client, {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", flags.node}},
      "migserve-agent");
  flags.options.event = events.Sink(flags.options.log);
  agent::NodeAgent node_agent(&client, driver.get(), flags.options);
  InstallInterruptHandlers();
  return node_agent.Run(InterruptFlag());
}

}  // namespace

void SetupAgent(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<AgentFlags>();
  AddKubeOptions(app, &flags->kube);
  app->add_option("--node", flags->node,
                  "This node's name (default: $NODE_NAME)");
  app->add_option("--nvml-library", flags->nvml_library,
                  "NVIDIA's NVML library, opened at run time")
      ->capture_default_str();
  app->add_option("--gpu", flags->gpu,
                  "GPU model of data/gpus (default: matched by NVML's name)");
  app->add_option("--device-plugin-namespace",
                  flags->options.device_plugin_namespace,
                  "Namespace of NVIDIA's device plugin pods")
      ->capture_default_str();
  app->add_option("--device-plugin-selector",
                  flags->options.device_plugin_selector,
                  "Label selector of the device plugin pods, restarted after "
                  "a change")
      ->capture_default_str();
  OnRun(app, context, [flags, context] { return RunAgent(*flags, context); });
}

}  // namespace migserve::cli
