#include "queueing/p99_capacity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "queueing/arrivals.h"
#include "queueing/credit_cache.h"
#include "util/mutex.h"

namespace migserve::queueing {
namespace {

constexpr uint64_t kSearchSeed = 1;

// The first arrival times of the unit-rate stream of `shape`; divided by a
// rate, the stream at that rate (the same randomness at every rate tried,
// so the quantile grows smoothly with the rate). Generated once per shape
// for the whole process and extended when a longer prefix is asked for:
// every replica's verdict under one shape runs on the same stream, and
// drawing it (gamma gaps) costs more than simulating the replica on it.
std::shared_ptr<const std::vector<double>> UnitArrivals(
    long requests, const ArrivalShape& shape) {
  struct Prefix {
    ShapedStream stream;
    std::shared_ptr<const std::vector<double>> times;
  };
  static Mutex mu;
  static std::map<ArrivalShape, Prefix> cache;  // with `mu` held
  MutexLock lock(&mu);
  auto it = cache.find(shape);
  if (it == cache.end()) {
    it = cache
             .emplace(shape, Prefix{ShapedStream(shape, kSearchSeed),
                                    std::make_shared<std::vector<double>>()})
             .first;
  }
  Prefix& prefix = it->second;
  if (static_cast<long>(prefix.times->size()) < requests) {
    // Readers of the shorter prefix keep theirs; the longer one is new.
    auto longer = std::make_shared<std::vector<double>>(*prefix.times);
    longer->reserve(requests);
    while (static_cast<long>(longer->size()) < requests) {
      longer->push_back(prefix.stream.Next());
    }
    prefix.times = std::move(longer);
  }
  return prefix.times;
}

// Counts the measured requests over the SLO, in all and in each of
// consecutive runs of requests (batches of the method of batch means), and
// says when too many are for the quantile to hold.
class MissCounter : public BatchSink {
 public:
  MissCounter(double slo_s, long allowed) : slo_s_(slo_s), allowed_(allowed) {}
  // The next run begins with the request arriving at `t`.
  void StartRun(double t) {
    starts_.push_back(t);
    by_run_.push_back(0);
  }
  int runs() const { return static_cast<int>(starts_.size()); }
  // A batch's arrivals are in order and end together, so its measured
  // misses are the measured requests before its first in time.
  void Served(const double* arrivals, int count, double done) override {
    if (starts_.empty()) return;
    int i = static_cast<int>(
        std::lower_bound(arrivals, arrivals + count, starts_.front()) -
        arrivals);
    if (i == count || done - arrivals[i] <= slo_s_) return;
    size_t run = std::upper_bound(starts_.begin(), starts_.end(), arrivals[i]) -
                 starts_.begin() - 1;
    for (; i < count && done - arrivals[i] > slo_s_; ++i) {
      while (run + 1 < starts_.size() && arrivals[i] >= starts_[run + 1]) {
        ++run;
      }
      ++misses_;
      ++by_run_[run];
    }
  }
  bool failed() const { return misses_ > allowed_; }
  const std::vector<long>& by_run() const { return by_run_; }

 private:
  std::vector<double> starts_;
  double slo_s_;
  long allowed_;
  long misses_ = 0;
  std::vector<long> by_run_;
};

// Runs of the measured requests, for the batch means.
constexpr int kRuns = 20;
// Student's t at 97.5% with kRuns - 1 degrees of freedom.
constexpr double kRunsT = 2.093;

// Returns whether the share of misses, estimated from `by_run` misses in
// runs of `per_run` requests, is below `share` by kRunsT standard errors of
// the batch means: near saturation misses come in long bursts, and a count
// judged as if they were independent passes by chance.
bool RunsWithin(const std::vector<long>& by_run, long per_run, double share) {
  double mean = 0;
  for (long m : by_run) mean += static_cast<double>(m) / per_run;
  mean /= by_run.size();
  double sq = 0;
  for (long m : by_run) {
    double d = static_cast<double>(m) / per_run - mean;
    sq += d * d;
  }
  double se = std::sqrt(sq / (by_run.size() - 1) / by_run.size());
  return mean + kRunsT * se <= share;
}

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

// Feeds `count` unit-rate arrivals (`unit(i)`: the i-th) scaled to `rate`
// to a replica reporting to `sink`, calling `each(i, t)` before arrival i;
// stops early once `stop` says so.
template <typename Unit, typename Each, typename Stop>
void Run(const BatchCurve& curve, const BatcherConfig& config, size_t count,
         Unit unit, double rate, BatchSink* sink, Each each, Stop stop) {
  ReplicaQueue queue(curve, config, sink);
  for (size_t i = 0; i < count; ++i) {
    double t = unit(i) / rate;
    each(i, t);
    if (i % 256 == 0) {
      queue.AdvanceTo(t);
      if (stop()) return;
    }
    queue.Arrive(t);
  }
  queue.Drain();
}

// Near saturation a queue's misses come in long busy periods, and a stream
// of the search's length holds too few of them. The relaxation time of a
// queue in heavy traffic grows as I / (1 - u)^2 for arrivals of dispersion
// index I at utilization u: a long verdict simulates I ((1 - kLongFrom) /
// (1 - u))^2 times the search's requests when that is more, at most
// kLongest times: a longer prefix of the same stream.
constexpr double kLongFrom = 0.8;
constexpr double kLongest = 10;

long RequestsAt(double utilization, const ArrivalShape& shape,
                const QuantileSearch& search) {
  double scale = 1;
  if (utilization < 1) {
    scale = DispersionIndex(shape) *
            std::pow((1 - kLongFrom) / (1 - utilization), 2);
  }
  return std::lround(std::clamp(scale, 1.0, kLongest) * search.requests);
}

// Whether the replica at `rate` keeps its quantile, judged on the search's
// stream, or on a long one (`long_stream`, RequestsAt).
bool Within(const BatchCurve& curve, const BatcherConfig& config, double rate,
            const ArrivalShape& shape, double slo_ms,
            const QuantileSearch& search, bool long_stream) {
  long count = search.requests;
  if (long_stream) {
    double saturation = ReplicaQueue(curve, config, nullptr).SaturationRate();
    count = RequestsAt(rate / saturation, shape, search);
  }
  size_t first = static_cast<size_t>(search.warmup * count);
  long measured = count - static_cast<long>(first);
  // Misses allowed: those the quantile allows, less standard errors of
  // their count (as if they were independent; queueing makes them cluster):
  // one on the search's stream, which only proposes a rate, three on the
  // long stream that confirms it, so that an estimate short by chance does
  // not pass; and the batch means must pass too (RunsWithin), which see the
  // clustering.
  double allowed = (1 - search.quantile) * measured;
  allowed -= (long_stream ? 3 : 1) * std::sqrt(allowed * search.quantile);
  long per_run = measured / kRuns;
  MissCounter misses(slo_ms / 1000, static_cast<long>(std::floor(allowed)));
  size_t next_run = first;  // the first request of the next run
  auto each = [&](size_t i, double t) {
    if (i == next_run && misses.runs() < kRuns) {
      misses.StartRun(t);
      next_run += per_run;
    }
  };
  auto stop = [&] { return misses.failed(); };
  auto unit = UnitArrivals(count, shape);
  Run(
      curve, config, count, [&](size_t i) { return (*unit)[i]; }, rate, &misses,
      each, stop);
  return !misses.failed() &&
         RunsWithin(misses.by_run(), per_run, 1 - search.quantile);
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
      MutexLock lock(&mu_);
      auto it = values_.find(key);
      if (it != values_.end()) return it->second;
    }
    Value value = compute();
    MutexLock lock(&mu_);
    values_.emplace(std::move(key), value);
    return value;
  }

 private:
  Mutex mu_;
  std::map<Key, Value> values_ GUARDED_BY(mu_);
};

// Within(), remembered: services that differ only in their rate try the
// same rates with the same arrival shape (every Erlang order is 64 once a
// service runs 64 replicas), so at fleet scale most simulations repeat.
bool CachedWithin(const BatchCurve& curve, const BatcherConfig& config,
                  double rate, const ArrivalShape& shape, double slo_ms,
                  const QuantileSearch& search, bool long_stream) {
  static Memo<std::tuple<ReplicaKey, double, ArrivalShape, bool>, bool> memo;
  return memo.Get(
      {KeyOf(curve, config, slo_ms, search), rate, shape, long_stream}, [&] {
        return Within(curve, config, rate, shape, slo_ms, search, long_stream);
      });
}

// The bisection QuantileCapacity runs: the highest step of tolerance x
// saturation that holds the quantile.
double Search(const BatchCurve& curve, const BatcherConfig& config,
              double slo_ms, const Traffic& traffic,
              const QuantileSearch& search) {
  double saturation = ReplicaQueue(curve, config, nullptr).SaturationRate();
  // Bisect on steps of tolerance x saturation: step lo holds, step hi not;
  // first on the search's stream, then, if the long stream refutes the
  // answer, below it on long streams.
  int steps = static_cast<int>(std::ceil(1 / search.tolerance));
  double step = saturation / steps;
  int lo = 0;
  int hi = curve.Ms(1) > slo_ms ? 0 : steps;
  auto bisect = [&](bool long_stream) {
    while (hi - lo > 1) {
      int mid = (lo + hi) / 2;
      double rate = mid * step;
      if (CachedWithin(curve, config, rate, ShapeAt(traffic, rate), slo_ms,
                       search, long_stream)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
  };
  bisect(false);
  double rate = lo * step;
  if (lo > 0 && !CachedWithin(curve, config, rate, ShapeAt(traffic, rate),
                              slo_ms, search, true)) {
    hi = lo;
    lo = 0;
    bisect(true);
  }
  return lo * step;
}

// Every input of a search as text, exactly (floats in hex), for the
// credit cache: the replica's key, the traffic, and for a verdict its rate.
std::string CacheKey(char kind, const ReplicaKey& key, const Traffic& traffic,
                     double rate) {
  const auto& [points, max_batch, workers, delay, slo, quantile, requests,
               warmup, tolerance] = key;
  std::string text(1, kind);
  for (const BatchCurve::Point& p : points) {
    text += fmt::format(" {}:{:a}", p.first, p.second);
  }
  text +=
      fmt::format(" b{} w{} d{:a} s{:a} q{:a} n{} u{:a} t{:a}", max_batch,
                  workers, delay, slo, quantile, requests, warmup, tolerance);
  text +=
      fmt::format(" r{:a} c{:a} {} x{} @{:a}", traffic.service_rate, traffic.cv,
                  RouterName(traffic.router), traffic.router_replicas, rate);
  return text;
}

// compute(), or the value the process's credit cache holds for the key
// `key()` makes (which it then keeps); without a cache no key is made.
template <typename Key, typename Compute>
double Persisted(Key key, Compute compute) {
  CreditCache* cache = GetCreditCache();
  if (cache == nullptr) return compute();
  std::string text = key();
  if (std::optional<double> known = cache->Find(text)) return *known;
  double value = compute();
  cache->Add(text, value);
  return value;
}

}  // namespace

double Quantile(std::vector<double>* values, double q) {
  if (values->empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * values->size()));
  size_t index = std::clamp<size_t>(rank, 1, values->size()) - 1;
  std::nth_element(values->begin(), values->begin() + index, values->end());
  return (*values)[index];
}

double LatencyQuantileMs(const BatchCurve& curve, const BatcherConfig& config,
                         double rate, const ArrivalShape& shape,
                         const QuantileSearch& search) {
  auto unit = UnitArrivals(search.requests, shape);
  LatencyCollector collector(
      (*unit)[static_cast<size_t>(search.warmup * search.requests)] / rate);
  Run(
      curve, config, search.requests, [&](size_t i) { return (*unit)[i]; },
      rate, &collector, [](size_t, double) {}, [] { return false; });
  return 1000 * Quantile(collector.latencies(), search.quantile);
}

bool QuantileHolds(const BatchCurve& curve, const BatcherConfig& config,
                   double slo_ms, const Traffic& traffic, double rate,
                   const QuantileSearch& search) {
  if (curve.Ms(1) > slo_ms) return false;
  return Persisted(
             [&] {
               return CacheKey('h', KeyOf(curve, config, slo_ms, search),
                               traffic, rate);
             },
             [&] {
               return Within(curve, config, rate, ShapeAt(traffic, rate),
                             slo_ms, search, false)
                          ? 1.0
                          : 0.0;
             }) > 0;
}

double QuantileCapacity(const BatchCurve& curve, const BatcherConfig& config,
                        double slo_ms, const Traffic& traffic,
                        const QuantileSearch& search) {
  static Memo<std::pair<ReplicaKey, Traffic>, double> memo;
  ReplicaKey key = KeyOf(curve, config, slo_ms, search);
  return memo.Get({key, traffic}, [&] {
    return Persisted(
        [&] { return CacheKey('c', key, traffic, 0); },
        [&] { return Search(curve, config, slo_ms, traffic, search); });
  });
}

}  // namespace migserve::queueing
