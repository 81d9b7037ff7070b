// The autoscaler following its workload as a resource changes: each new
// generation that parses is followed from the next round, and every target
// written from it says which generation it came from; one that does not
// parse is named once and the last good one kept; a read that fails keeps
// it too. The workload's services are observed through PromQL of their own
// (`observe: {rate: "vector(N)"}`) on a real Prometheus.
#include "autoscale/following.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "autoscale/sizer.h"
#include "autoscale/testing/local_prometheus.h"
#include "autoscale/testing/quick_loop.h"
#include "boundary/input_file.h"
#include "deployment/deployment_json.h"
#include "profile/profile_csv.h"
#include "util/file.h"
#include "util/test_util.h"
#include "util/unix_time.h"
#include "workload/workload_yaml.h"

namespace migserve::autoscale {
namespace {

// Two services made for 1,200 req/s each, resnet50-1 observed at 1,000
// and bert-1 at `bert_rate`.
std::string Spec(int bert_rate) {
  return "gpu: A100-SXM4-80GB\nlatency_budget: 1\nmax_procs: 1\nservices:\n"
         "  - {name: bert-1, model: bert, throughput: 1200, latency_ms: 100,\n"
         "     observe: {rate: \"vector(" +
         std::to_string(bert_rate) +
         ")\"}}\n"
         "  - {name: resnet50-1, model: resnet50, throughput: 1200,\n"
         "     latency_ms: 100, observe: {rate: \"vector(1000)\"}}\n";
}

TEST(FollowingTest, EachGenerationIsFollowedAndNamedInTheTargetsItMakes) {
  const profile::ProfileTable profiles =
      profile::LoadProfileCsv(
          testing::SourcePath("data/profiles/a100-80gb.csv"))
          .value();
  const std::string target = testing::TempDir() + "/following-target.json";
  const workload::Workload first =
      workload::ParseWorkload(Spec(1000), "w.yaml").value();
  ASSERT_TRUE(WriteFileAtomic(target, deployment::FormatDeployment(
                                          Sizer::Make(first, profiles, {})
                                              .value()
                                              .Deploy({1200, 1200}, nullptr)
                                              .value()))
                  .ok());
  auto prometheus = LocalPrometheus::Start({});
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().ToString();

  // The resource: its spec and generation as a test sets them.
  WorkloadText resource{Spec(1000), 1};
  Status reads = Status::Ok();
  std::vector<WorkloadReport> reports;
  WorkloadSource source{
      "servingworkload serving/w", "serving/w",
      [&]() -> StatusOr<WorkloadText> {
        if (!reads.ok()) return reads;
        return resource;
      },
      [&](const WorkloadReport& report) { reports.push_back(report); }};
  std::vector<std::string> said;
  Following following(profiles, QuickLoop((*prometheus)->url(), target, &said));
  ASSERT_TRUE(following.Follow(ReadWorkloadSource(source).value()).ok());
  EXPECT_EQ(following.generation(), 1);
  EXPECT_EQ(following.Step(UnixNow()).value(), Round::kHold)
      << (said.empty() ? "" : said.back());
  // What its status says (autoscale/kubernetes/workload_status.h).
  WorkloadReport report = following.Report();
  EXPECT_EQ(report.observed, 1);
  EXPECT_EQ(report.followed, 1);
  EXPECT_EQ(report.services, 2);
  EXPECT_EQ(report.refused, "");
  ASSERT_TRUE(report.round);
  EXPECT_TRUE(report.round->planned);
  EXPECT_EQ(report.round->reason, "Steady");

  // The same generation: nothing said, nothing made anew.
  following.Reread(source);
  EXPECT_TRUE(said.empty());

  // Generation 2 observes bert-1 at 3,000 req/s: the next round moves up,
  // the target it writes naming the generation.
  resource = {Spec(3000), 2};
  following.Reread(source);
  ASSERT_FALSE(said.empty());
  EXPECT_EQ(said.back(),
            "WorkloadChanged: following servingworkload serving/w "
            "generation 2 (2 services), was 1");
  EXPECT_EQ(following.Step(UnixNow()).value(), Round::kUp);
  report = following.Report();
  EXPECT_EQ(report.followed, 2);
  ASSERT_TRUE(report.round);
  EXPECT_TRUE(report.round->planned);
  EXPECT_EQ(report.round->reason, "ScaledUp");
  EXPECT_EQ("ScaledUp: " + report.round->message, said.back());
  deployment::Deployment moved = deployment::LoadDeployment(target).value();
  ASSERT_TRUE(moved.summary && moved.summary->workload);
  EXPECT_EQ(*moved.summary->workload,
            (deployment::WorkloadOrigin{"serving/w", 2}));
  // And it reads back as written.
  const std::string text = ReadFile(target).value();
  EXPECT_NE(text.find(R"("workload": {
      "generation": 2,
      "name": "serving/w"
    })"),
            std::string::npos)
      << text;

  // Generation 3 does not parse: named once, generation 2 kept.
  resource = {Spec(3000) + "  - {name: bert-1, model: bert}\n", 3};
  const size_t before = said.size();
  following.Reread(source);
  following.Reread(source);
  ASSERT_EQ(said.size(), before + 1);
  EXPECT_TRUE(
      said.back().starts_with("WorkloadInvalid: servingworkload serving/w:"))
      << said.back();
  EXPECT_TRUE(said.back().ends_with("; going on with generation 2"))
      << said.back();
  EXPECT_EQ(following.generation(), 2);
  report = following.Report();
  EXPECT_EQ(report.observed, 3);
  EXPECT_EQ(report.followed, 2);
  EXPECT_TRUE(report.refused.starts_with("servingworkload serving/w:"))
      << report.refused;

  // A read that fails keeps it too, said once.
  reads = Status::Unavailable("the API server is away");
  following.Reread(source);
  following.Reread(source);
  ASSERT_EQ(said.size(), before + 2);
  EXPECT_EQ(said.back(),
            "WorkloadInvalid: the API server is away; going on with "
            "generation 2");
  EXPECT_EQ(following.generation(), 2);
  EXPECT_EQ(following.Report().observed, 3);
  EXPECT_EQ(following.Report().refused, "the API server is away");
  EXPECT_NE(following.Metrics().find("migserve_autoscale_rounds_total"),
            std::string::npos);

  // A workload that names files next to it is refused as a resource.
  reads = Status::Ok();
  resource = {Spec(3000) + "llm_measurements: runs.csv\n", 4};
  following.Reread(source);
  EXPECT_NE(said.back().find("servingworkload serving/w: llm_measurements: "
                             "a ServingWorkload names no file"),
            std::string::npos)
      << said.back();
  EXPECT_EQ(following.generation(), 2);

  // Back at the generation followed: nothing refused.
  resource = {Spec(3000), 2};
  following.Reread(source);
  EXPECT_EQ(following.Report().observed, 2);
  EXPECT_EQ(following.Report().refused, "");

  // Refused at the start (an autoscaler starting on generation 4): the
  // refusal is reported before it is returned, nothing followed.
  resource = {Spec(3000) + "llm_measurements: runs.csv\n", 4};
  EXPECT_TRUE(reports.empty());
  EXPECT_FALSE(ReadWorkloadSource(source).ok());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].observed, 4);
  EXPECT_EQ(reports[0].followed, 0);
  EXPECT_NE(reports[0].refused.find("a ServingWorkload names no file"),
            std::string::npos)
      << reports[0].refused;
}

}  // namespace
}  // namespace migserve::autoscale
