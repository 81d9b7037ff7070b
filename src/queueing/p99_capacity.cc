#include "queueing/p99_capacity.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include "queueing/arrivals.h"

namespace migserve::queueing {
namespace {

constexpr uint64_t kSearchSeed = 1;
constexpr std::array<int, 12> kOrders = {1,  2,  3,  4,  6,  8,
                                         12, 16, 24, 32, 48, 64};

// Arrival times of a unit-rate stream with Erlang-`order` gaps; divided by a
// rate, the stream at that rate (the same randomness at every rate tried,
// so the quantile grows smoothly with the rate).
const std::vector<double>& UnitArrivals(int requests, int order) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, std::vector<double>> cache;
  std::lock_guard<std::mutex> lock(mu);
  std::vector<double>& times = cache[{requests, order}];
  if (times.empty()) {
    ArrivalProcess process{ArrivalProcess::Kind::kGamma,
                           1 / std::sqrt(static_cast<double>(order))};
    if (order == 1) process = ArrivalProcess{};
    ArrivalStream stream(process, 1.0, kSearchSeed);
    times.resize(requests);
    for (double& t : times) t = stream.Next();
  }
  return times;
}

// Counts the measured requests over the SLO, and says when too many are
// for the quantile to hold.
class MissCounter : public BatchSink {
 public:
  MissCounter(double from, double slo_s, long allowed)
      : from_(from), slo_s_(slo_s), allowed_(allowed) {}
  void Served(const double* arrivals, int count, double done) override {
    for (int i = 0; i < count; ++i) {
      if (arrivals[i] >= from_ && done - arrivals[i] > slo_s_) ++misses_;
    }
  }
  bool failed() const { return misses_ > allowed_; }

 private:
  double from_;
  double slo_s_;
  long allowed_;
  long misses_ = 0;
};

class LatencyCollector : public BatchSink {
 public:
  explicit LatencyCollector(double from) : from_(from) {}
  void Served(const double* arrivals, int count, double done) override {
    for (int i = 0; i < count; ++i) {
      if (arrivals[i] >= from_) latencies_.push_back(done - arrivals[i]);
    }
  }
  std::vector<double>* latencies() { return &latencies_; }

 private:
  double from_;
  std::vector<double> latencies_;
};

// Feeds the stream at `rate` to a replica reporting to `sink`; stops early
// once `stop` says so.
template <typename Stop>
void Run(const BatchCurve& curve, const BatcherConfig& config,
         const std::vector<double>& unit, double rate, BatchSink* sink,
         Stop stop) {
  ReplicaQueue queue(curve, config, sink);
  for (size_t i = 0; i < unit.size(); ++i) {
    double t = unit[i] / rate;
    if (i % 256 == 0) {
      queue.AdvanceTo(t);
      if (stop()) return;
    }
    queue.Arrive(t);
  }
  queue.Drain();
}

bool Within(const BatchCurve& curve, const BatcherConfig& config, double rate,
            int order, double slo_ms, const QuantileSearch& search) {
  const std::vector<double>& unit = UnitArrivals(search.requests, order);
  size_t first = static_cast<size_t>(search.warmup * unit.size());
  long measured = static_cast<long>(unit.size() - first);
  // Misses allowed: those the quantile allows, less three standard errors
  // of their count (as if they were independent; queueing makes them
  // cluster), so that an estimate short by chance does not pass.
  double allowed = (1 - search.quantile) * measured;
  allowed -= 3 * std::sqrt(allowed * search.quantile);
  MissCounter misses(unit[first] / rate, slo_ms / 1000,
                     static_cast<long>(std::floor(allowed)));
  Run(curve, config, unit, rate, &misses, [&] { return misses.failed(); });
  return !misses.failed();
}

// What a replica's verdicts depend on besides the rate: its curve, batcher,
// SLO and the search.
using ReplicaKey = std::tuple<std::vector<BatchCurve::Point>, int, int, double,
                              double, double, int, double, double>;

ReplicaKey KeyOf(const BatchCurve& curve, const BatcherConfig& config,
                 double slo_ms, const QuantileSearch& search) {
  return {curve.points(),           config.max_batch, config.workers,
          config.max_queue_delay_s, slo_ms,           search.quantile,
          search.requests,          search.warmup,    search.tolerance};
}

// Values computed once per key for the whole process, by any thread (two
// threads may both compute a missing value; they get the same one).
template <typename Key, typename Value>
class Memo {
 public:
  template <typename Compute>
  Value Get(Key key, Compute compute) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = values_.find(key);
      if (it != values_.end()) return it->second;
    }
    Value value = compute();
    std::lock_guard<std::mutex> lock(mu_);
    values_.emplace(std::move(key), value);
    return value;
  }

 private:
  std::mutex mu_;
  std::map<Key, Value> values_;
};

// Within(), remembered: services that differ only in their rate try the
// same rates with the same Erlang order (every order is 64 once a service
// runs 64 replicas), so at fleet scale most simulations repeat.
bool CachedWithin(const BatchCurve& curve, const BatcherConfig& config,
                  double rate, int order, double slo_ms,
                  const QuantileSearch& search) {
  static Memo<std::tuple<ReplicaKey, double, int>, bool> memo;
  return memo.Get({KeyOf(curve, config, slo_ms, search), rate, order}, [&] {
    return Within(curve, config, rate, order, slo_ms, search);
  });
}

}  // namespace

double Quantile(std::vector<double>* values, double q) {
  if (values->empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * values->size()));
  size_t index = std::clamp<size_t>(rank, 1, values->size()) - 1;
  std::nth_element(values->begin(), values->begin() + index, values->end());
  return (*values)[index];
}

int ErlangOrder(double rate, double service_rate) {
  int order = 1;
  for (int k : kOrders) {
    if (k <= service_rate / rate) order = k;
  }
  return order;
}

double LatencyQuantileMs(const BatchCurve& curve, const BatcherConfig& config,
                         double rate, int order, const QuantileSearch& search) {
  const std::vector<double>& unit = UnitArrivals(search.requests, order);
  LatencyCollector collector(
      unit[static_cast<size_t>(search.warmup * unit.size())] / rate);
  Run(curve, config, unit, rate, &collector, [] { return false; });
  return 1000 * Quantile(collector.latencies(), search.quantile);
}

bool QuantileHolds(const BatchCurve& curve, const BatcherConfig& config,
                   double slo_ms, double service_rate, double rate,
                   const QuantileSearch& search) {
  if (curve.Ms(1) > slo_ms) return false;
  return Within(curve, config, rate, ErlangOrder(rate, service_rate), slo_ms,
                search);
}

double QuantileCapacity(const BatchCurve& curve, const BatcherConfig& config,
                        double slo_ms, double service_rate,
                        const QuantileSearch& search) {
  static Memo<std::pair<ReplicaKey, double>, double> memo;
  return memo.Get({KeyOf(curve, config, slo_ms, search), service_rate}, [&] {
    double saturation = ReplicaQueue(curve, config, nullptr).SaturationRate();
    // Bisect on steps of tolerance x saturation: step lo holds, step hi not.
    int steps = static_cast<int>(std::ceil(1 / search.tolerance));
    double step = saturation / steps;
    int lo = 0;
    int hi = curve.Ms(1) > slo_ms ? 0 : steps;
    while (hi - lo > 1) {
      int mid = (lo + hi) / 2;
      double rate = mid * step;
      if (CachedWithin(curve, config, rate, ErlangOrder(rate, service_rate),
                       slo_ms, search)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo * step;
  });
}

}  // namespace migserve::queueing
