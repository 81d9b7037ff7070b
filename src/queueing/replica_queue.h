// One replica as a dynamic batcher (Triton's dynamic_batching): requests
// queue in arrival order; when one of its processes is free, it starts a
// batch of the queued requests, at most `max_batch` of them, as soon as the
// queue holds `max_batch` requests or its oldest request has waited
// `max_queue_delay` (0: at once, Triton's default). A batch of b holds the
// process for the curve's time of b; every request of it completes at the
// batch's end. MPS processes are parallel workers sharing the queue.
//
// The queue is driven by its arrivals: Arrive(t) with non-decreasing t, and
// AdvanceTo(t) before asking what is outstanding at t. A batch is started
// only once every arrival that could join it is known.
#ifndef MIGSERVE_QUEUEING_REPLICA_QUEUE_H_
#define MIGSERVE_QUEUEING_REPLICA_QUEUE_H_

#include <cstddef>
#include <vector>

#include "queueing/batch_curve.h"

namespace migserve::queueing {

struct BatcherConfig {
  int max_batch = 1;
  int workers = 1;               // MPS processes
  double max_queue_delay_s = 0;  // 0: greedy, start a batch at once
};

// Told of every batch as it starts: the arrival times of its requests (in
// order) and when the batch ends, seconds.
class BatchSink {
 public:
  virtual ~BatchSink() = default;
  virtual void Served(const double* arrivals, int count, double done) = 0;
};

class ReplicaQueue {
 public:
  ReplicaQueue(const BatchCurve& curve, const BatcherConfig& config,
               BatchSink* sink);

  void Arrive(double t) { queued_.push_back(t); }
  // Starts every batch that starts before `t`.
  void AdvanceTo(double t);
  // Serves every request that has arrived.
  void Drain();
  // Requests that have arrived and not completed by `t` (after
  // AdvanceTo(t)).
  int Outstanding(double t) const;
  // The longest a batch takes, and so the fastest this replica can serve:
  // workers x max_batch / seconds of a full batch, requests per second.
  double SaturationRate() const;
  // Seconds its processes have been busy, summed over processes.
  double busy_seconds() const { return busy_seconds_; }

 private:
  std::vector<double> seconds_of_batch_;  // index b: a batch of b
  BatcherConfig config_;
  BatchSink* sink_;
  std::vector<double> queued_;  // arrival times; [head_, end) waiting
  size_t head_ = 0;
  std::vector<double> free_at_;  // per worker
  std::vector<int> in_service_;  // per worker: its current batch's size
  double busy_seconds_ = 0;
};

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_REPLICA_QUEUE_H_
