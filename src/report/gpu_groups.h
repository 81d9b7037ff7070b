// A deployment's GPUs as the views draw them: by node, and identical GPUs
// of a node (same model, layout, services and batches) as one with a count
// when the deployment is large.
#ifndef MIGSERVE_REPORT_GPU_GROUPS_H_
#define MIGSERVE_REPORT_GPU_GROUPS_H_

#include <string>
#include <vector>

#include "deployment/deployment.h"

namespace migserve::report {

struct GpuGroup {
  const deployment::DeployedGpu* gpu;  // the first of the group
  std::string model;
  int count = 1;
};

struct NodeGroups {
  std::string node;  // empty: GPUs not placed on nodes
  std::vector<GpuGroup> gpus;
  int total = 0;    // GPUs, counts included
  int serving = 0;  // of them serving
};

// Nodes in name order, GPUs in file order; identical GPUs merge only when
// the deployment has more than `collapse_above` GPUs.
std::vector<NodeGroups> GroupGpus(const deployment::Deployment& deployment,
                                  int collapse_above);

// The memory slices of a GPU of `model` (8 if the catalog does not know
// it), and of its `profile` instances (1 if unknown): how wide views draw
// them.
int MemorySlices(const std::string& model);
int MemorySlices(const std::string& model, const std::string& profile);

// A GPU as the plan's actions name it: "node/index" once placed on a node,
// "GPU 3" with an index but no node, else "gpu 3" (its id).
std::string GpuName(const deployment::DeployedGpu& gpu);

// The group's first GPU as GpuName names it, or without its node ("GPU 3",
// under a heading that names the node), with " × N" for a group.
enum class NodeInLabel { kNamed, kLeftToHeading };
std::string GpuLabel(const GpuGroup& group, NodeInLabel node);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_GPU_GROUPS_H_
