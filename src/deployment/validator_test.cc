#include "deployment/validator.h"

#include <gtest/gtest.h>

#include "deployment/deployment_json.h"
#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace migserve::deployment {
namespace {

class ValidatorTest : public ::testing::Test {
 protected:
  StatusOr<ValidationReport> Check(const std::string& gpus_json) {
    auto d = ParseDeployment(
        R"({"gpu": "A100-SXM4-80GB", "gpus": )" + gpus_json + "}", "d.json");
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return Validate(*d, workload_, profiles_, gpu_);
  }

  const mig::GpuModel& gpu_ =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  profile::ProfileTable profiles_ =
      profile::ParseProfileCsv(
          "model,gpu,profile,batch,procs,throughput,latency_ms\n"
          "m,A100-SXM4-80GB,1g.10gb,1,1,100,10\n"
          "m,A100-SXM4-80GB,1g.10gb,8,1,300,60\n"
          "m,A100-SXM4-80GB,3g.40gb,8,1,500,20\n"
          "m,A100-SXM4-80GB,4g.40gb,8,1,700,20\n",
          "p.csv")
          .value();
  workload::Workload workload_ =
      workload::ParseWorkload(
          "gpu: A100-SXM4-80GB\ncapacity_model: paper\nservices:\n"
          "  - {name: a, model: m, throughput: 1000, latency_ms: 50}\n",
          "w.yaml")
          .value();
};

TEST_F(ValidatorTest, AcceptsSufficientLegalDeployment) {
  auto r = Check(R"([{"id": 7, "instances": [
      {"profile": "3g.40gb", "start": 0, "service": "a"},
      {"profile": "3g.40gb", "start": 4, "service": "a", "batch": 8, "procs": 1,
       "throughput": 1.0}]}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->problems[0];
  EXPECT_DOUBLE_EQ(r->services[0].provided, 1000);  // file's 1.0 ignored
  EXPECT_EQ(r->services[0].replicas, 2);
}

// A deployment whose credits assume another router than the workload's is
// checked under the workload's, with a warning that names both.
TEST_F(ValidatorTest, WarnsWhenServedByAnotherRouterThanItsCreditsAssume) {
  auto d = ParseDeployment(
      R"({"gpu": "A100-SXM4-80GB", "gpus": [{"id": 0, "instances": [
          {"profile": "3g.40gb", "start": 0, "service": "a"},
          {"profile": "3g.40gb", "start": 4, "service": "a"}]}],
          "summary": {"algorithm": "milp", "gpus": 1, "router": "random"}})",
      "d.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  auto r = Validate(*d, workload_, profiles_, gpu_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("assume router random, but w.yaml is served "
                                "by router proxy"),
            std::string::npos)
      << r->warnings[0];
  d->summary->router = queueing::RouterKind();
  EXPECT_TRUE(Validate(*d, workload_, profiles_, gpu_)->warnings.empty());
  auto bad = ParseDeployment(
      R"({"gpu": "A100-SXM4-80GB", "gpus": [],
          "summary": {"algorithm": "milp", "gpus": 0, "router": "envoy"}})",
      "d.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("summary.router: must be proxy"),
            std::string::npos)
      << bad.status().message();
}

TEST_F(ValidatorTest, ShortServiceIsNamed) {
  auto r = Check(R"([{"id": 0, "instances": [
      {"profile": "3g.40gb", "start": 0, "service": "a"}]}])");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->problems.size(), 1u);
  EXPECT_EQ(r->problems[0],
            "service 'a': 50.0% of its required throughput (500 of 1000 "
            "req/s)");
}

// Export and the controller weight routes by the throughput the file
// declares: a replica that declares more than its profile row gives is a
// problem, however the service's sum comes out.
TEST_F(ValidatorTest, AReplicaThatDeclaresMoreThanItGivesIsNamed) {
  auto r = Check(R"([{"id": 0, "instances": [
      {"profile": "3g.40gb", "start": 0, "service": "a", "throughput": 1e6},
      {"profile": "3g.40gb", "start": 4, "service": "a", "throughput": 500}]}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->problems.size(), 1u);
  EXPECT_EQ(r->problems[0],
            "gpu 0: instance 3g.40gb@0: declares 1e+06 req/s for 'a', more "
            "than the 500 its profile row measured in p.csv");
  EXPECT_DOUBLE_EQ(r->services[0].provided, 1000);
}

TEST_F(ValidatorTest, IllegalLayoutAndBadInstancesAreNamed) {
  auto r = Check(R"([{"id": 3, "instances": [
      {"profile": "4g.40gb", "start": 0, "service": "a"},
      {"profile": "3g.40gb", "start": 0, "service": "a"}]},
    {"id": 3, "instances": [
      {"profile": "1g.10gb", "start": 0, "service": "a", "batch": 8},
      {"profile": "1g.10gb", "start": 1, "service": "zz"},
      {"profile": "2g.20gb", "start": 2, "service": "a"}]}])");
  ASSERT_TRUE(r.ok());
  std::vector<std::string> expected = {
      "gpu 3: illegal layout 3g.40gb@0+4g.40gb@0: 4g.40gb@0 overlaps "
      "3g.40gb@0 at memory slice 0",
      "gpu 3: duplicate id (gpus[0] and gpus[1])",
      "gpu 3: instance 1g.10gb@0: batch 8 has latency 60 ms, over the limit "
      "of 50 ms for service 'a'",
      "gpu 3: instance 1g.10gb@1: serves 'zz', which the workload does not "
      "have",
      "gpu 3: instance 2g.20gb@2: service 'a' cannot run on 2g.20gb: model "
      "'m' was not measured there",
  };
  ASSERT_GE(r->problems.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r->problems[i], expected[i]);
  }
}

TEST_F(ValidatorTest, MeasuredButTooSlowIsToldApartFromNotMeasured) {
  profiles_ = profile::ParseProfileCsv(
                  "model,gpu,profile,batch,procs,throughput,latency_ms\n"
                  "m,A100-SXM4-80GB,2g.20gb,8,1,300,80\n",
                  "p.csv")
                  .value();
  auto r = Check(R"([{"id": 0, "instances": [
      {"profile": "2g.20gb", "start": 0, "service": "a"}]}])");
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->problems.size(), 1u);
  EXPECT_EQ(r->problems[0],
            "gpu 0: instance 2g.20gb@0: service 'a' cannot run on 2g.20gb: "
            "no measured point of 'm' there meets its SLO (latency limit 50 "
            "ms, at most 1 process(es)) or fits its memory");
}

TEST_F(ValidatorTest, UnknownProfileOrOtherGpuIsBadInput) {
  auto r = Check(
      R"([{"id": 0, "instances": [{"profile": "5g.50gb", "start": 0}]}])");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "d.json: gpus[0].instances[0].profile: unknown profile '5g.50gb' "
            "on A100-SXM4-80GB");
  auto d =
      ParseDeployment(R"({"gpu": "H100-SXM5-80GB", "gpus": []})", "d.json");
  auto other = Validate(*d, workload_, profiles_, gpu_);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Status::Code::kInvalidArgument);
}

// A placed deployment lists every GPU of its fleet: an idle GPU of a model
// the workload does not offer is the fleet's, one that serves is a problem.
TEST_F(ValidatorTest, OnlyAServingGpuMustBeAModelTheWorkloadOffers) {
  auto r = Check(R"([{"id": 0, "instances": [
      {"profile": "4g.40gb", "start": 0, "service": "a"},
      {"profile": "3g.40gb", "start": 4, "service": "a"}]},
      {"id": 1, "gpu": "H100-SXM5-80GB", "instances": []},
      {"id": 2, "gpu": "H100-SXM5-80GB", "instances": [
      {"profile": "7g.80gb", "start": 0}]}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->problems[0];
  r = Check(R"([{"id": 0, "instances": [
      {"profile": "4g.40gb", "start": 0, "service": "a"},
      {"profile": "3g.40gb", "start": 4, "service": "a"}]},
      {"id": 1, "gpu": "H100-SXM5-80GB", "instances": [
      {"profile": "7g.80gb", "start": 0, "service": "a"}]}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->ok());
  EXPECT_EQ(r->problems[0],
            "gpu 1: a H100-SXM5-80GB, which the workload does not offer");
}

}  // namespace
}  // namespace migserve::deployment
