#include "queueing/replica_queue.h"

#include <gtest/gtest.h>

#include <cmath>

#include "queueing/arrivals.h"
#include "queueing/md1_test_util.h"

namespace migserve::queueing {
namespace {

using testing::MD1WaitCdf;

struct Completion {
  double arrival;
  double done;
};

class Recorder : public BatchSink {
 public:
  explicit Recorder(std::vector<Completion>* out) : out_(out) {}
  void Served(const double* arrivals, int count, double done) override {
    for (int i = 0; i < count; ++i) out_->push_back({arrivals[i], done});
  }

 private:
  std::vector<Completion>* out_;
};

std::vector<Completion> Serve(const BatchCurve& curve,
                              const BatcherConfig& config,
                              const std::vector<double>& arrivals) {
  std::vector<Completion> done;
  Recorder recorder(&done);
  ReplicaQueue q(curve, config, &recorder);
  for (double t : arrivals) {
    q.AdvanceTo(t);
    q.Arrive(t);
  }
  q.Drain();
  return done;
}

TEST(ReplicaQueueTest, AnIdleReplicaAnswersInTheBatchTime) {
  BatchCurve curve({{1, 8}, {4, 20}});
  auto done = Serve(curve, {.max_batch = 4}, {0, 1, 2.5});
  ASSERT_EQ(done.size(), 3u);
  for (const Completion& c : done) {
    EXPECT_DOUBLE_EQ(c.done - c.arrival, 0.008);
  }
}

TEST(ReplicaQueueTest, GreedyBatchesTakeWhatIsQueuedUpToTheMaximum) {
  BatchCurve curve({{1, 10}, {4, 40}});  // 10 ms per request
  // Ten at once: batches of 4, 4 and 2; then one alone, then three that
  // arrive while it runs form the next batch.
  std::vector<double> arrivals(10, 1.0);
  arrivals.insert(arrivals.end(), {2.0, 2.001, 2.002, 2.003});
  auto done = Serve(curve, {.max_batch = 4}, arrivals);
  ASSERT_EQ(done.size(), 14u);
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(done[i].done, 1.040);
  for (int i = 4; i < 8; ++i) EXPECT_DOUBLE_EQ(done[i].done, 1.080);
  EXPECT_DOUBLE_EQ(done[8].done, 1.100);
  EXPECT_DOUBLE_EQ(done[9].done, 1.100);
  EXPECT_DOUBLE_EQ(done[10].done, 2.010);
  for (int i = 11; i < 14; ++i) EXPECT_DOUBLE_EQ(done[i].done, 2.040);
}

TEST(ReplicaQueueTest, ATimerWaitsForTheOldestRequestsDelayOrAFullBatch) {
  BatchCurve curve({{1, 10}, {4, 40}});
  BatcherConfig timer{.max_batch = 4, .max_queue_delay_s = 0.005};
  auto done = Serve(curve, timer, {0, 0.002, 1.0, 1.001, 1.002, 1.003});
  ASSERT_EQ(done.size(), 6u);
  EXPECT_DOUBLE_EQ(done[0].done, 0.005 + 0.020);  // a batch of 2 at 5 ms
  EXPECT_DOUBLE_EQ(done[1].done, 0.025);
  for (int i = 2; i < 6; ++i) EXPECT_DOUBLE_EQ(done[i].done, 1.003 + 0.040);
}

TEST(ReplicaQueueTest, MpsProcessesServeInParallelAndCountOutstanding) {
  BatchCurve curve({{1, 10}});
  std::vector<Completion> done;
  Recorder recorder(&done);
  ReplicaQueue q(curve, {.max_batch = 1, .workers = 2}, &recorder);
  q.Arrive(0);
  q.Arrive(0);
  q.Arrive(0);
  q.AdvanceTo(0.001);
  EXPECT_EQ(q.Outstanding(0.001), 3);
  q.AdvanceTo(0.015);
  EXPECT_EQ(q.Outstanding(0.015), 1);
  q.Drain();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_DOUBLE_EQ(done[0].done, 0.010);
  EXPECT_DOUBLE_EQ(done[1].done, 0.010);
  EXPECT_DOUBLE_EQ(done[2].done, 0.020);
  EXPECT_DOUBLE_EQ(q.SaturationRate(), 200);
  EXPECT_DOUBLE_EQ(q.busy_seconds(), 0.030);
}

// M/D/1 (batch 1, one process): the mean wait is Pollaczek-Khinchine's
// rho D / (2 (1 - rho)), and the wait's distribution is Erlang's.
TEST(ReplicaQueueTest, MD1MatchesPollaczekKhinchineAndErlang) {
  const double d = 0.010;
  BatchCurve curve({{1, 1000 * d}});
  for (double rho : {0.5, 0.8}) {
    ArrivalStream arrivals(ArrivalProcess{}, rho / d, 42);
    std::vector<double> times(400000);
    for (double& t : times) t = arrivals.Next();
    auto done = Serve(curve, {.max_batch = 1}, times);
    ASSERT_EQ(done.size(), times.size());  // nothing lost
    double sum = 0;
    std::vector<double> waits;
    for (const Completion& c : done) {
      sum += c.done - c.arrival;
      waits.push_back((c.done - c.arrival - d) / d);
    }
    double mean = sum / done.size();
    double expected = d + rho * d / (2 * (1 - rho));
    EXPECT_NEAR(mean, expected, 0.02 * expected) << "rho " << rho;
    for (double t : {0.5, 1.5, 3.0}) {
      double below = std::count_if(waits.begin(), waits.end(),
                                   [&](double w) { return w <= t; });
      EXPECT_NEAR(below / waits.size(), MD1WaitCdf(rho, t), 0.01)
          << "rho " << rho << " t " << t;
    }
  }
}

}  // namespace
}  // namespace migserve::queueing
