#include "report/terminal_view.h"

#include <gtest/gtest.h>

namespace migserve::report {
namespace {

deployment::PlacedInstance Instance(std::string profile, int start,
                                    std::optional<std::string> service,
                                    int batch) {
  deployment::PlacedInstance i;
  i.profile = std::move(profile);
  i.start = start;
  i.service = std::move(service);
  i.batch = batch;
  return i;
}

TEST(TerminalViewTest, SlicesAsCellsByNodeWithALegend) {
  deployment::Deployment d;
  d.gpu = "A100-SXM4-80GB";
  d.services = {{"bert", "bert", Rate::Of(1).value(), 1, 0},
                {"resnet50", "resnet50", Rate::Of(1).value(), 1, 0}};
  deployment::DeployedGpu a;
  a.id = 0;
  a.node = "gpu-a1";
  a.index = 3;
  a.instances = {Instance("3g.40gb", 4, "bert", 64),
                 Instance("2g.20gb", 0, "resnet50", 8),
                 Instance("1g.10gb", 2, std::nullopt, 0)};
  deployment::DeployedGpu b;
  b.id = 1;
  b.node = "gpu-a1";
  b.index = 0;
  d.gpus = {a, b};
  EXPECT_EQ(TerminalView(d),
            "gpu-a1: 2 GPUs, 1 serving\n"
            "  GPU 3         [B 2g.20gb b8][- 1g ].......[A 3g.40gb b64     "
            "        ]\n"
            "  GPU 0         ........................................"
            "................\n"
            "\n"
            "A   bert                B   resnet50\n"
            "[- ...] idle instance   ... memory slice without an instance\n");
}

TEST(TerminalViewTest, IdenticalGpusCollapseAboveTheThreshold) {
  deployment::Deployment d;
  d.gpu = "A100-SXM4-80GB";
  d.services = {{"s", "m", Rate::Of(1).value(), 1, 0}};
  for (int k = 0; k < 3; ++k) {
    deployment::DeployedGpu g;
    g.id = k;
    g.instances = {Instance("7g.80gb", 0, "s", 4)};
    d.gpus.push_back(g);
  }
  std::string collapsed = TerminalView(d, 2);
  EXPECT_NE(collapsed.find("gpu 0 \u00d7 3"), std::string::npos) << collapsed;
  EXPECT_EQ(TerminalView(d, 3).find("\u00d7"), std::string::npos);
}

}  // namespace
}  // namespace migserve::report
