#include "report/terminal_view.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "report/gpu_groups.h"

namespace migserve::report {
namespace {

constexpr int kSliceChars = 7;  // characters per memory slice

// A, B, ..., Z, then A2, B2, ...: short and unambiguous.
std::string Code(size_t k) {
  std::string code(1, static_cast<char>('A' + k % 26));
  if (k >= 26) code += std::to_string(k / 26 + 1);
  return code;
}

// The instance's cell: "[A 3g.40gb b64   ]" in `width` characters; where
// that does not fit, the code and batch ("[A b8 ]"), or for an idle
// instance "[- 1g ]".
std::string Cell(const std::string& code, const deployment::PlacedInstance& i,
                 int width) {
  std::string batch =
      i.batch > 0 && i.service ? fmt::format(" b{}", i.batch) : "";
  std::string shape = i.profile.substr(0, i.profile.find('.'));
  std::string text;
  for (const std::string& candidate :
       {code + " " + i.profile + batch, code + " " + shape + batch,
        code + batch, code + " " + shape, code}) {
    if (static_cast<int>(candidate.size()) <= width - 2) {
      text = candidate;
      break;
    }
  }
  if (text.empty()) text = code.substr(0, width - 2);
  return "[" + text + std::string(width - 2 - text.size(), ' ') + "]";
}

}  // namespace

std::string TerminalView(const deployment::Deployment& deployment,
                         int collapse_above) {
  std::map<std::string, std::string> code_of;
  std::vector<std::string> services;
  for (const workload::Service& s : deployment.services) {
    if (code_of.emplace(s.name, Code(services.size())).second) {
      services.push_back(s.name);
    }
  }
  std::string out;
  for (const NodeGroups& node : GroupGpus(deployment, collapse_above)) {
    out += fmt::format("{}: {} GPUs, {} serving\n",
                       node.node.empty() ? "(not placed on nodes)" : node.node,
                       node.total, node.serving);
    for (const GpuGroup& group : node.gpus) {
      std::string row(MemorySlices(group.model) * kSliceChars, '.');
      for (const deployment::PlacedInstance& i : group.gpu->instances) {
        int width = MemorySlices(group.model, i.profile) * kSliceChars;
        std::string code = "-";
        if (i.service) {
          auto it = code_of.find(*i.service);
          code = it == code_of.end() ? "?" : it->second;
        }
        std::string cell = Cell(code, i, width);
        if (i.start * kSliceChars + width <= static_cast<int>(row.size())) {
          row.replace(i.start * kSliceChars, width, cell);
        }
      }
      out += fmt::format("  {:<13} {}\n",
                         GpuLabel(group, NodeInLabel::kLeftToHeading), row);
    }
  }
  out += "\n";
  for (size_t k = 0; k < services.size(); ++k) {
    bool last = (k + 1) % 4 == 0 || k + 1 == services.size();
    out += fmt::format(
        "{:<3} {}", code_of[services[k]],
        last ? services[k] + "\n" : fmt::format("{:<20}", services[k]));
  }
  out += "[- ...] idle instance   ... memory slice without an instance\n";
  return out;
}

std::string TerminalViewJson(const deployment::Deployment& deployment,
                             int collapse_above) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeGroups& node : GroupGpus(deployment, collapse_above)) {
    nlohmann::json groups = nlohmann::json::array();
    for (const GpuGroup& group : node.gpus) {
      nlohmann::json instances = nlohmann::json::array();
      for (const deployment::PlacedInstance& i : group.gpu->instances) {
        instances.push_back({{"profile", i.profile},
                             {"start", i.start},
                             {"service", i.service ? nlohmann::json(*i.service)
                                                   : nlohmann::json()},
                             {"batch", i.batch}});
      }
      groups.push_back({{"label", GpuLabel(group, NodeInLabel::kLeftToHeading)},
                        {"gpu", group.model},
                        {"count", group.count},
                        {"instances", std::move(instances)}});
    }
    nodes.push_back({{"node", node.node.empty() ? nlohmann::json()
                                                : nlohmann::json(node.node)},
                     {"gpus", node.total},
                     {"serving", node.serving},
                     {"groups", std::move(groups)}});
  }
  return nlohmann::json({{"nodes", std::move(nodes)}}).dump(2) + "\n";
}

}  // namespace migserve::report
