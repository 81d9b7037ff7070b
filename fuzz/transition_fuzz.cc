// Any text as the cluster a move starts from (issue 92: the transition
// entry points, `optimize --from` and the autoscaler's sizer, met only the
// deployments the tests wrote, and an empty one crashed them): a
// deployment it reads is taken as the current cluster and the sizer moves
// it to a small workload's rates through the transition-aware milp, with a
// small work limit. An error or a deployment, never a crash.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "autoscale/sizer.h"
#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace {

using namespace migserve;

// bert on A100-SXM4-80GB at batch 8 (data/profiles/a100-80gb.csv's rows)
// and resnet50's 1g and 7g rows.
constexpr char kProfiles[] =
    "model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb\n"
    "bert,A100-SXM4-80GB,1g.10gb,8,1,101.907,79,\n"
    "bert,A100-SXM4-80GB,2g.20gb,8,1,147.54,54,\n"
    "bert,A100-SXM4-80GB,3g.40gb,8,1,178.161,45,\n"
    "bert,A100-SXM4-80GB,4g.40gb,8,1,205.061,39,\n"
    "bert,A100-SXM4-80GB,7g.80gb,8,1,219.006,37,\n"
    "resnet50,A100-SXM4-80GB,1g.10gb,8,1,180,44,\n"
    "resnet50,A100-SXM4-80GB,7g.80gb,8,1,900,9,\n";

constexpr char kWorkload[] =
    "gpu: A100-SXM4-80GB\n"
    "services:\n"
    "  - {name: bert-1, model: bert, throughput: 300, latency_ms: 200}\n"
    "  - {name: resnet50-1, model: resnet50, throughput: 400, "
    "latency_ms: 200}\n";

struct Inputs {
  profile::ProfileTable profiles;
  workload::Workload workload;
  std::unique_ptr<autoscale::Sizer> sizer;
};

const Inputs& Setup() {
  static const Inputs* inputs = [] {
    auto* in = new Inputs;
    in->profiles = profile::ParseProfileCsv(kProfiles, "fuzz.csv").value();
    in->workload = workload::ParseWorkload(kWorkload, "fuzz.yaml").value();
    autoscale::SizerOptions options;
    options.move_nodes = 50;
    options.move_time_limit_s = 2;
    options.solve.time_limit_s = 2;
    options.solve.threads = 1;
    options.solve.max_gpus = 64;
    in->sizer = std::make_unique<autoscale::Sizer>(
        autoscale::Sizer::Make(in->workload, in->profiles, options).value());
    return in;
  }();
  return *inputs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Inputs& in = Setup();
  std::string text(reinterpret_cast<const char*>(data), size);
  auto d = deployment::ParseDeployment(text, "fuzz.json");
  if (!d.ok()) return 0;
  auto current = cluster::ClusterFromDeployment(*d, {8, 0});
  if (!current.ok()) return 0;
  (void)in.sizer->Deploy({300, 400}, &*current);
  return 0;
}
