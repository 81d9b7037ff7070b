#include "deployment/gpu_config.h"

#include <gtest/gtest.h>

#include "deployment/deployment.h"
#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace migserve::deployment {
namespace {

TEST(GpuConfigTest, UtilityAndCompletionRates) {
  const mig::GpuModel& gpu =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  auto profiles = profile::ParseProfileCsv(
      "model,gpu,profile,batch,throughput,latency_ms\n"
      "m,A100-SXM4-80GB,1g.10gb,1,50,10\n"
      "m,A100-SXM4-80GB,4g.40gb,1,300,10\n",
      "p.csv");
  auto w = workload::ParseWorkload(
      "gpu: A100-SXM4-80GB\ncapacity_model: paper\nservices:\n"
      "  - {name: a, model: m, throughput: 1000, latency_ms: 50}\n"
      "  - {name: b, model: m, throughput: 100, latency_ms: 50}\n",
      "w.yaml");
  auto caps = workload::CapacityMatrix::Build(*w, *profiles, gpu);
  ASSERT_TRUE(caps.ok());
  int g1 = gpu.FindProfile("1g.10gb"), g4 = gpu.FindProfile("4g.40gb");
  GpuConfig config{mig::Layout({{g4, 0}, {g1, 4}, {g1, 5}, {g1, 6}}),
                   {0, 0, 1, kIdle}};
  Utility u = ConfigUtility(config, *caps);
  EXPECT_DOUBLE_EQ(u[0], 0.35);  // paper 5.1: 300/1000 + 50/1000
  EXPECT_DOUBLE_EQ(u[1], 0.5);
  CompletionRates rates = Completion({config, config}, *caps, {0.2, 0.0});
  EXPECT_DOUBLE_EQ(rates[0], 0.9);
  EXPECT_DOUBLE_EQ(rates[1], 1.0);
  EXPECT_FALSE(AllSatisfied(rates));
  rates[0] = 1.0 - 1e-12;
  EXPECT_TRUE(AllSatisfied(rates));

  Deployment d = MakeDeployment(*w, gpu, *caps, {config});
  ASSERT_EQ(d.gpus.size(), 1u);
  EXPECT_EQ(d.gpus[0].instances[0].profile, "4g.40gb");
  EXPECT_DOUBLE_EQ(d.gpus[0].instances[0].credit, 300);
  EXPECT_FALSE(d.gpus[0].instances[3].service.has_value());
}

}  // namespace
}  // namespace migserve::deployment
