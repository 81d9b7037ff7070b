#include "queueing/replica_queue.h"

#include <algorithm>
#include <limits>

namespace migserve::queueing {

ReplicaQueue::ReplicaQueue(const BatchCurve& curve, const BatcherConfig& config,
                           BatchSink* sink)
    : config_(config),
      sink_(sink),
      free_at_(config.workers, 0),
      in_service_(config.workers, 0) {
  seconds_of_batch_.resize(config.max_batch + 1, 0);
  for (int b = 1; b <= config.max_batch; ++b) {
    seconds_of_batch_[b] = curve.Ms(b) / 1000;
  }
}

void ReplicaQueue::AdvanceTo(double t) {
  const int max_batch = config_.max_batch;
  while (head_ < queued_.size()) {
    size_t waiting = queued_.size() - head_;
    int w = static_cast<int>(
        std::min_element(free_at_.begin(), free_at_.end()) - free_at_.begin());
    double trigger = queued_[head_] + config_.max_queue_delay_s;
    if (waiting >= static_cast<size_t>(max_batch)) {
      trigger = std::min(trigger, queued_[head_ + max_batch - 1]);
    }
    double start = std::max(free_at_[w], trigger);
    if (start >= t) break;
    // The batch: the queued requests that arrived by its start, at most
    // max_batch (arrivals are in order).
    auto first = queued_.begin() + head_;
    auto limit = first + std::min<size_t>(waiting, max_batch);
    size_t end =
        (*(limit - 1) <= start ? limit
                               : std::upper_bound(first, limit, start)) -
        queued_.begin();
    int size = static_cast<int>(end - head_);
    double done = start + seconds_of_batch_[size];
    sink_->Served(&queued_[head_], size, done);
    busy_seconds_ += done - start;
    free_at_[w] = done;
    in_service_[w] = size;
    head_ = end;
  }
  if (head_ > 4096 && 2 * head_ > queued_.size()) {
    queued_.erase(queued_.begin(), queued_.begin() + head_);
    head_ = 0;
  }
}

void ReplicaQueue::Drain() {
  AdvanceTo(std::numeric_limits<double>::infinity());
}

int ReplicaQueue::Outstanding(double t) const {
  int n = static_cast<int>(queued_.size() - head_);
  for (size_t w = 0; w < free_at_.size(); ++w) {
    if (free_at_[w] > t) n += in_service_[w];
  }
  return n;
}

double ReplicaQueue::SaturationRate() const {
  return config_.workers * config_.max_batch /
         seconds_of_batch_[config_.max_batch];
}

}  // namespace migserve::queueing
