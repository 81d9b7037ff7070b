#include "report/deployment_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "report/gpu_groups.h"

namespace migserve::report {
namespace {

constexpr int kGpuLabelPx = 150;  // px for the GPU's name
constexpr int kSlicePx = 64;      // px per memory slice
constexpr int kGpuRowPx = 40;     // px per GPU

// The first `chars` characters of `text`, with "…" when cut.
std::string Abbreviate(const std::string& text, int chars) {
  if (static_cast<int>(text.size()) <= chars) return text;
  return text.substr(0, std::max(chars - 1, 1)) + "\u2026";
}

// Opens an instance's element: <g class="instance KEY"> (the service's
// palette key, for the report's filter) with its place as data attributes
// and a tooltip.
std::string InstanceOpen(const std::string& node, const std::string& gpu_attr,
                         const std::string& gpu_label,
                         const deployment::PlacedInstance& i,
                         const Palette& palette) {
  std::string service = i.service.value_or("");
  return fmt::format(
      "<g class=\"instance{}\" data-node=\"{}\" data-gpu=\"{}\" "
      "data-profile=\"{}\" data-start=\"{}\" data-service=\"{}\">"
      "<title>{} {} {}@{}: {}{}</title>",
      service.empty() ? " idle" : " " + palette.Key(service), Escape(node),
      gpu_attr, Escape(i.profile), i.start, Escape(service), Escape(node),
      Escape(gpu_label), Escape(i.profile), i.start,
      service.empty() ? "idle" : Escape(service),
      i.batch > 0 ? fmt::format(", batch {}, {} proc(s), {} req/s", i.batch,
                                i.procs, Num(i.credit))
                  : "");
}

std::string GpuAttr(const deployment::DeployedGpu& g) {
  return g.index ? std::to_string(*g.index) : std::to_string(g.id);
}

std::string GpuRow(const GpuGroup& d, const std::string& node, int y,
                   const Palette& palette) {
  const deployment::DeployedGpu& g = *d.gpu;
  std::string gpu_attr = GpuAttr(g);
  std::string out = fmt::format(
      "<g class=\"gpu{}\" data-node=\"{}\" data-gpu=\"{}\" data-model=\"{}\" "
      "transform=\"translate(0,{})\">\n",
      d.gpu->Serving() ? "" : " idle-gpu", Escape(node), gpu_attr,
      Escape(d.model), y);
  std::string label = GpuLabel(d, NodeInLabel::kNamed);
  out += fmt::format(
      "<text class=\"gpu-label\" x=\"4\" y=\"{}\">{}</text>\n"
      "<text class=\"gpu-model\" x=\"4\" y=\"{}\">{}{}</text>\n",
      kGpuRowPx / 2 - 2, Escape(label), kGpuRowPx / 2 + 10, Escape(d.model),
      d.gpu->Serving() ? "" : " \u00b7 idle");
  out += fmt::format(
      "<rect class=\"gpu-frame\" x=\"{}\" y=\"2\" width=\"{}\" height=\"{}\" "
      "/>\n",
      kGpuLabelPx, MemorySlices(d.model) * kSlicePx, kGpuRowPx - 6);
  for (const deployment::PlacedInstance& i : g.instances) {
    std::string service = i.service.value_or("");
    int width = MemorySlices(d.model, i.profile) * kSlicePx - 3;
    int x = kGpuLabelPx + i.start * kSlicePx + 1;
    std::string fill = service.empty() ? "#F4F4F4" : palette.Colour(service);
    std::string ink = service.empty() ? "#777777" : palette.Ink(service);
    int chars = std::max(width / 6, 2);
    std::string second =
        service.empty() ? "idle"
                        : Abbreviate(service, chars - 4) +
                              (i.batch > 0 ? fmt::format(" b{}", i.batch) : "");
    out += InstanceOpen(node, gpu_attr, label, i, palette) +
           fmt::format(
               "<rect x=\"{}\" y=\"4\" width=\"{}\" height=\"{}\" rx=\"3\" "
               "fill=\"{}\"/>{}"
               "<text x=\"{}\" y=\"17\" fill=\"{}\">{}</text>"
               "<text x=\"{}\" y=\"30\" fill=\"{}\">{}</text></g>\n",
               x, width, kGpuRowPx - 10, fill,
               PatternOverlay(palette, service, x, 4, width, kGpuRowPx - 10),
               x + 4, ink, Escape(Abbreviate(i.profile, chars)), x + 4, ink,
               Escape(second));
  }
  return out + "</g>\n";
}

// A node as a block of small GPUs, 4 px a memory slice, one above the
// other: the whole fleet fits on a screen.
std::string MiniNode(const NodeGroups& node, const Palette& palette) {
  constexpr int kMiniSlice = 4, kMiniRow = 7;
  int width = 8;
  for (const GpuGroup& d : node.gpus)
    width = std::max(width, MemorySlices(d.model));
  std::string out = fmt::format(
      "<figure class=\"mini-node\" data-node=\"{}\"><svg width=\"{}\" "
      "height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">\n",
      Escape(node.node), width * kMiniSlice,
      static_cast<int>(node.gpus.size()) * kMiniRow);
  for (size_t k = 0; k < node.gpus.size(); ++k) {
    const GpuGroup& d = node.gpus[k];
    int y = static_cast<int>(k) * kMiniRow;
    std::string gpu_attr = GpuAttr(*d.gpu);
    out += fmt::format(
        "<g class=\"gpu{}\" data-node=\"{}\" data-gpu=\"{}\" "
        "data-model=\"{}\"><rect class=\"gpu-frame\" x=\"0\" y=\"{}\" "
        "width=\"{}\" height=\"{}\"/>",
        d.gpu->Serving() ? "" : " idle-gpu", Escape(node.node), gpu_attr,
        Escape(d.model), y, MemorySlices(d.model) * kMiniSlice, kMiniRow - 1);
    for (const deployment::PlacedInstance& i : d.gpu->instances) {
      std::string service = i.service.value_or("");
      int x = i.start * kMiniSlice;
      int width = MemorySlices(d.model, i.profile) * kMiniSlice - 1;
      out += InstanceOpen(node.node, gpu_attr, GpuLabel(d, NodeInLabel::kNamed),
                          i, palette) +
             fmt::format(
                 "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                 "fill=\"{}\"/>{}</g>",
                 x, y, width, kMiniRow - 1,
                 service.empty() ? "#F4F4F4" : palette.Colour(service),
                 PatternOverlay(palette, service, x, y, width, kMiniRow - 1));
    }
    out += "</g>\n";
  }
  return out +
         fmt::format("</svg><figcaption>{}</figcaption></figure>\n",
                     node.node.empty() ? "(not placed)" : Escape(node.node));
}

}  // namespace

std::string DeploymentView(const deployment::Deployment& deployment,
                           const Palette& palette, int compact_above) {
  std::vector<NodeGroups> nodes =
      GroupGpus(deployment, std::numeric_limits<int>::max());
  std::string out;
  if (static_cast<int>(deployment.gpus.size()) > compact_above) {
    out += fmt::format(
        "<p class=\"muted\">{} GPUs on {} nodes, drawn small (more than {}): "
        "each node a block, each GPU a bar of its memory slices; hover for "
        "an instance's service, profile and batch.</p>\n<div "
        "class=\"fleet-map\">\n",
        deployment.gpus.size(), nodes.size(), compact_above);
    for (const NodeGroups& node : nodes) out += MiniNode(node, palette);
    return out + "</div>\n";
  }
  for (const NodeGroups& node : nodes) {
    int width = 8;
    for (const GpuGroup& d : node.gpus)
      width = std::max(width, MemorySlices(d.model));
    out += fmt::format(
        "<section class=\"node\" data-node=\"{}\"><h3>{} <span "
        "class=\"muted\">{} GPUs, {} serving, {} idle</span></h3>\n"
        "<svg class=\"gpus\" width=\"{}\" height=\"{}\" "
        "xmlns=\"http://www.w3.org/2000/svg\">\n",
        Escape(node.node),
        node.node.empty() ? "not placed on nodes" : Escape(node.node),
        node.total, node.serving, node.total - node.serving,
        kGpuLabelPx + width * kSlicePx + 4,
        static_cast<int>(node.gpus.size()) * kGpuRowPx);
    for (size_t k = 0; k < node.gpus.size(); ++k) {
      out += GpuRow(node.gpus[k], node.node, static_cast<int>(k) * kGpuRowPx,
                    palette);
    }
    out += "</svg></section>\n";
  }
  return out;
}

}  // namespace migserve::report
