#include "workload/service_kind.h"

#include <gtest/gtest.h>

#include <string>

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"
#include "workload/capacity_matrix.h"
#include "workload/replica_credit.h"
#include "workload/workload_yaml.h"

namespace migserve::workload {
namespace {

TEST(ServiceKindTest, TheShippedKindsAndTheirFacets) {
  EXPECT_EQ(ServiceKind().name(), "dnn");
  EXPECT_FALSE(ServiceKind().HasTokenTerms());
  EXPECT_EQ(ServiceKind().traits().engine, Engine::kTriton);
  std::optional<ServiceKind> llm = ParseServiceKind("llm");
  ASSERT_TRUE(llm);
  EXPECT_TRUE(llm->HasTokenTerms());
  EXPECT_EQ(llm->traits().engine, Engine::kVllm);
  EXPECT_FALSE(ParseServiceKind("gan"));
  // Other tests of this binary may have registered more kinds since.
  EXPECT_EQ(ServiceKindChoices().substr(0, 17), "dnn (the default)");
}

// A third kind that combines facets that exist is one registration: a
// workload names it, its services are credited on the one path as those
// of the kind whose facets it shares, and files carry it.
TEST(ServiceKindTest, AThirdKindIsOneRegistration) {
  StatusOr<ServiceKind> embedding = RegisterServiceKind(
      {"embedding", CreditSource::kProfileRows, Engine::kTriton});
  ASSERT_TRUE(embedding.ok()) << embedding.status().ToString();
  EXPECT_EQ(ParseServiceKind("embedding"), *embedding);
  EXPECT_NE(ServiceKindChoices().find("embedding"), std::string::npos);
  EXPECT_EQ(RegisterServiceKind({"embedding"}).status().message(),
            "service kind 'embedding' is registered already");
  EXPECT_FALSE(RegisterServiceKind({"", CreditSource::kProfileRows}).ok());
  // vLLM's metrics read TTFT and TPOT, which only token terms give.
  EXPECT_FALSE(
      RegisterServiceKind({"odd", CreditSource::kProfileRows, Engine::kVllm})
          .ok());

  auto w = ParseWorkload(
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: a, model: m, throughput: 100, latency_ms: 200}\n"
      "  - {name: e, model: m, kind: embedding, throughput: 100, "
      "latency_ms: 200}\n",
      "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->services[1].kind, *embedding);
  EXPECT_FALSE(w->services[1].tokens);
  auto back = ParseWorkload(FormatWorkload(*w), "again.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->services[1].kind, *embedding);
  EXPECT_EQ(back->services[0].kind, ServiceKind());

  profile::ProfileTable profiles =
      profile::ParseProfileCsv(
          "model,gpu,profile,batch,procs,throughput,latency_ms\n"
          "m,A100-SXM4-80GB,1g.10gb,4,1,120,30\n"
          "m,A100-SXM4-80GB,7g.80gb,8,1,1000,12\n",
          "p.csv")
          .value();
  const mig::GpuModel& gpu =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  auto m = CapacityMatrix::Build(*w, profiles, gpu);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (int p = 0; p < m->num_profiles(); ++p) {
    EXPECT_EQ(m->throughput(0, p), m->throughput(1, p)) << p;
  }
  int g1 = gpu.FindProfile("1g.10gb");
  EXPECT_GT(m->throughput(1, g1), 0);
  ReplicaCredit c = CreditOf(*w, w->services[1], profiles, gpu, g1);
  EXPECT_EQ(c.rate, m->throughput(1, g1));
  ASSERT_TRUE(c.row);
  EXPECT_EQ(c.row->throughput, 120);  // the measured rate, not the credit
  EXPECT_EQ(c.ceiling, 120);
  int g2 = gpu.FindProfile("2g.20gb");
  EXPECT_EQ(
      CannotRunMessage(w->services[1], "2g.20gb",
                       CreditOf(*w, w->services[1], profiles, gpu, g2).why_not),
      "service 'e' cannot run on 2g.20gb: model 'm' was not measured "
      "there");
}

}  // namespace
}  // namespace migserve::workload
