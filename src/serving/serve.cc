#include "serving/serve.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "cluster/routing.h"
#include "llm/balanced_batchers.h"
#include "llm/batcher_simulation.h"
#include "llm/slice_model.h"
#include "profile/capacity.h"
#include "queueing/batch_curve.h"
#include "queueing/p99_capacity.h"
#include "queueing/replica_queue.h"
#include "queueing/router_kind.h"

namespace migserve::serving {
namespace {

constexpr int kMaxProxies = 64;

struct ReplicaRef {
  const cluster::GpuState* gpu;
  const cluster::Slot* slot;
};

// Counts what a service's replicas serve and keeps the latencies of the
// requests that arrived in [from, to).
class ServiceSink : public queueing::BatchSink {
 public:
  ServiceSink(double from, double to) : from_(from), to_(to) {}
  void Served(const double* arrivals, int count, double done) override {
    served_ += count;
    if (done >= from_ && done < to_) completed_in_window_ += count;
    for (int i = 0; i < count; ++i) {
      if (arrivals[i] >= from_ && arrivals[i] < to_) {
        latencies_.push_back(done - arrivals[i]);
      }
    }
  }
  long served() const { return served_; }
  long completed_in_window() const { return completed_in_window_; }
  std::vector<double>* latencies() { return &latencies_; }

 private:
  double from_;
  double to_;
  long served_ = 0;
  long completed_in_window_ = 0;
  std::vector<double> latencies_;
};

// FNV-1a of the service's name mixed with the seed: each service its own
// stream, whatever the order or number of services.
uint64_t SeedFor(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h ^ (seed * 0x9E3779B97F4A7C15ULL);
}

// One queue per replica, each a dynamic batcher of its measured row, all
// telling `sink`. Returns InvalidArgument naming the instance whose row the
// profiles lack.
Status MakeQueues(const workload::Service& service,
                  const std::vector<ReplicaRef>& refs,
                  const profile::ProfileTable& profiles,
                  const ServeOptions& options, ServiceSink* sink,
                  std::vector<queueing::ReplicaQueue>* queues) {
  for (const ReplicaRef& ref : refs) {
    const cluster::Replica& r = *ref.slot->replica;
    const std::string& model = r.model.empty() ? service.model : r.model;
    const std::string& profile =
        ref.gpu->model->profiles[ref.slot->instance.profile].name;
    const profile::ProfileRow* row = profile::FindRow(
        profiles, model, ref.gpu->model->name, profile, r.batch, r.procs);
    if (row == nullptr || row->throughput <= 0) {
      return Status::InvalidArgument(fmt::format(
          "{}: instance {}@{}: no measured point of '{}' on {} {} with batch "
          "{} and {} process(es) in {}",
          ref.gpu->id.ToString(), profile, ref.slot->instance.start, model,
          ref.gpu->model->name, profile, r.batch, r.procs, profiles.source));
    }
    queues->emplace_back(
        queueing::BatchCurve::Of(profiles, *row),
        queueing::BatcherConfig{r.batch, r.procs,
                                options.max_queue_delay_ms / 1000},
        sink);
  }
  return Status::Ok();
}

// How the router groups the replicas, and the rate at which the routing
// saturates the first replica.
struct Routing {
  std::vector<std::vector<int>> groups;
  std::vector<long> weights;
  double saturation = 0;
};

Routing RoutingOf(RoutingPolicy policy, const std::vector<ReplicaRef>& refs,
                  const cluster::ServiceRoute& route,
                  const std::vector<double>& saturation) {
  Routing out;
  if (policy != RoutingPolicy::kRoundRobin &&
      policy != RoutingPolicy::kLeastOutstanding) {
    // The route's weights; the rate at which it saturates a replica is its
    // routed capacity with each group at its slowest replica's saturation.
    std::vector<cluster::RouteGroup> of;  // each replica's group, once
    for (const ReplicaRef& r : refs) {
      of.push_back(
          cluster::GroupOf(*r.slot->replica, *r.gpu->model, r.slot->instance));
    }
    cluster::ServiceRoute saturating = route;
    for (size_t k = 0; k < route.groups.size(); ++k) {
      const cluster::RouteGroup& group = route.groups[k];
      std::vector<int> members;
      double slowest = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < refs.size(); ++i) {
        if (cluster::SameGroup(of[i], group)) {
          members.push_back(static_cast<int>(i));
          slowest = std::min(slowest, saturation[i]);
        }
      }
      saturating.groups[k].credit = slowest;
      out.groups.push_back(std::move(members));
      out.weights.push_back(group.weight);
    }
    out.saturation = cluster::RoutedCapacity(saturating);
    return out;
  }
  std::vector<int> all(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) all[i] = static_cast<int>(i);
  out.groups.push_back(std::move(all));
  out.weights.push_back(1);
  if (policy == RoutingPolicy::kRoundRobin) {
    out.saturation =
        *std::min_element(saturation.begin(), saturation.end()) * refs.size();
  } else {
    for (double s : saturation) out.saturation += s;
  }
  return out;
}

// The latencies' mean, share within `slo_ms` and quantiles, into `out`.
void Summarize(std::vector<double>* latencies, double slo_ms,
               ServiceServing* out) {
  out->requests = static_cast<long>(latencies->size());
  if (latencies->empty()) return;
  double sum = 0;
  for (double l : *latencies) sum += l;
  out->mean_ms = 1000 * sum / latencies->size();
  double slo_s = slo_ms / 1000;
  out->within_slo =
      static_cast<double>(std::count_if(latencies->begin(), latencies->end(),
                                        [&](double l) { return l <= slo_s; })) /
      latencies->size();
  out->p50_ms = 1000 * queueing::Quantile(latencies, 0.50);
  out->p90_ms = 1000 * queueing::Quantile(latencies, 0.90);
  out->p99_ms = 1000 * queueing::Quantile(latencies, 0.99);
}

// What `service` is offered, on `refs`, before it is served.
ServiceServing Offered(const workload::Service& service,
                       const std::vector<ReplicaRef>& refs,
                       const ServeOptions& options) {
  ServiceServing out;
  out.service = service.name;
  out.slo_ms = service.latency_ms;
  out.required = service.throughput.value();
  out.offered = options.load * service.throughput.value();
  out.replicas = static_cast<int>(refs.size());
  return out;
}

// `service`, an LLM's, at token level (serve.h).
StatusOr<ServiceServing> ServeLlmService(const workload::Workload& workload,
                                         const workload::Service& service,
                                         const std::vector<ReplicaRef>& refs,
                                         const ServeOptions& options) {
  ServiceServing out = Offered(service, refs, options);
  const llm::LlmTerms& terms = *service.tokens;
  LlmServing llm{terms.ttft_ms, terms.tpot_ms};
  out.tokens = llm;
  if (refs.empty()) return out;
  MIGSERVE_ASSIGN_OR_RETURN(const llm::LlmModel* model,
                            workload.llm_models->Find(service.model));
  double credits = 0;
  for (const ReplicaRef& r : refs) credits += r.slot->replica->credit;
  queueing::Traffic traffic = workload.TermsOf(service).traffic;
  traffic.service_rate = out.offered;
  traffic.cv = options.arrivals.kind == queueing::ArrivalProcess::Kind::kGamma
                   ? options.arrivals.cv
                   : 1;
  // Each replica's slice, as calibrated and scaled.
  std::vector<llm::BalancedReplica> replicas;
  std::vector<std::string> bases;
  for (const ReplicaRef& r : refs) {
    const mig::Profile& profile =
        r.gpu->model->profiles[r.slot->instance.profile];
    llm::Calibrated calibrated =
        workload.LlmCalibration(*model, *r.gpu->model, profile);
    if (std::find(bases.begin(), bases.end(), calibrated.basis) ==
        bases.end()) {
      bases.push_back(calibrated.basis);
    }
    llm::EngineOptions engine = calibrated.engine;
    engine.decode_scale *= options.llm_step_scale;
    engine.prefill_scale *= options.llm_step_scale;
    engine.step_overhead_ms +=
        options.llm_step_overhead_ms / engine.decode_scale;
    MIGSERVE_ASSIGN_OR_RETURN(
        llm::SliceCapacity slice,
        llm::SliceOf(*model, *r.gpu->model, profile, engine));
    replicas.push_back({slice, r.slot->replica->credit});
  }
  // Enough for a p99 within a percent or two whatever the duration (a
  // credit's are over 3 x 3,600 requests), per replica.
  auto requests_at = [&](double rate, size_t replicas) {
    return std::max(20000 * static_cast<int>(replicas),
                    static_cast<int>(std::lround(rate * options.duration_s)));
  };
  uint64_t seed = SeedFor(options.seed, service.name);
  llm::BatcherSamples all;
  if (options.routing == RoutingPolicy::kProxies) {
    // What the proxy runs for these services: least outstanding by credit
    // at each of its proxies, the replicas on one clock.
    int requests = requests_at(out.offered, replicas.size());
    all = llm::RunBalancedBatchers(replicas, options.proxies,
                                   options.llm_balancing, terms, traffic,
                                   {out.offered, requests, ++seed});
    out.arrived = requests;
  } else {
    // Each replica on its credit's share of the arrivals, independently:
    // a random split, so each replica's arrivals are the service's thinned
    // at random (Poisson for Poisson), whatever router the workload names
    // (issue 93: the proxy's rotation shaped them, and the tail came out
    // about half a random split's).
    queueing::Traffic split = traffic;
    split.router = *queueing::ParseRouter("random");
    for (const llm::BalancedReplica& r : replicas) {
      double rate = out.offered * r.weight / credits;
      int requests = requests_at(rate, 1);
      llm::BatcherSamples s =
          llm::RunBatcher(r.slice, terms, split, {rate, requests, ++seed});
      for (auto [from, to] : {std::pair{&s.ttft_ms, &all.ttft_ms},
                              {&s.tpot_ms, &all.tpot_ms},
                              {&s.latency_ms, &all.latency_ms}}) {
        to->insert(to->end(), from->begin(), from->end());
      }
      all.fits = all.fits && s.fits;
      all.kv_occupancy += s.kv_occupancy / static_cast<double>(replicas.size());
      all.prefix_cache_hit_rate +=
          s.prefix_cache_hit_rate / static_cast<double>(replicas.size());
      out.arrived += requests;
    }
  }
  if (!all.fits) {
    return Status::FailedPrecondition(fmt::format(
        "{}: a request of {} does not fit the KV cache of a replica's slice",
        service.name, service.model));
  }
  out.served = out.arrived;
  out.achieved = out.offered;
  out.saturation = credits;
  out.utilization = out.offered / credits;
  out.stable = out.utilization < 1;
  out.tokens->ttft_p50_ms = queueing::Quantile(&all.ttft_ms, 0.5);
  out.tokens->ttft_p99_ms = queueing::Quantile(&all.ttft_ms, 0.99);
  out.tokens->tpot_p50_ms = queueing::Quantile(&all.tpot_ms, 0.5);
  out.tokens->tpot_p99_ms = queueing::Quantile(&all.tpot_ms, 0.99);
  out.tokens->kv_occupancy = all.kv_occupancy;
  out.tokens->prefix_cache_hit_rate = all.prefix_cache_hit_rate;
  out.tokens->basis = fmt::format("{}", fmt::join(bases, "; "));
  std::vector<double> seconds;
  for (double ms : all.latency_ms) seconds.push_back(ms / 1000);
  Summarize(&seconds, service.latency_ms, &out);
  return out;
}

StatusOr<ServiceServing> ServeService(const workload::Service& service,
                                      const std::vector<ReplicaRef>& refs,
                                      const cluster::ServiceRoute& route,
                                      const profile::ProfileTable& profiles,
                                      const ServeOptions& options,
                                      const std::function<void(double)>& tick) {
  ServiceServing out = Offered(service, refs, options);
  if (refs.empty()) return out;

  ServiceSink sink(options.warmup_s, options.duration_s);
  std::vector<queueing::ReplicaQueue> queues;
  MIGSERVE_RETURN_IF_ERROR(
      MakeQueues(service, refs, profiles, options, &sink, &queues));
  std::vector<double> saturation;
  for (const queueing::ReplicaQueue& q : queues) {
    saturation.push_back(q.SaturationRate());
  }
  Routing routing = RoutingOf(options.routing, refs, route, saturation);
  out.saturation = routing.saturation;
  out.utilization = out.offered / out.saturation;
  out.stable = out.utilization < 1;

  uint64_t seed = SeedFor(options.seed, service.name);
  RequestRouter router(options.routing, std::move(routing.groups),
                       std::move(routing.weights),
                       {options.proxies, options.in_group, seed + 1});
  queueing::ArrivalStream stream(options.arrivals, out.offered, seed);
  for (double t = stream.Next(); t < options.duration_s; t = stream.Next()) {
    int r = router.Pick(t, &queues);
    queues[r].AdvanceTo(t);
    queues[r].Arrive(t);
    // The clock is read only every so many arrivals.
    if ((++out.arrived & 0xffff) == 0) tick(t);
  }
  for (queueing::ReplicaQueue& q : queues) q.Drain();

  out.served = sink.served();
  out.achieved =
      sink.completed_in_window() / (options.duration_s - options.warmup_s);
  Summarize(sink.latencies(), service.latency_ms, &out);
  return out;
}

}  // namespace

Status ServeOptions::Validate() const {
  for (auto [flag, value, range] :
       {std::tuple{"--load", load, kLoadRange},
        std::tuple{"--duration", duration_s, kDurationRange},
        std::tuple{"--llm-step-scale", llm_step_scale, NumberRange{0.1, 10}},
        std::tuple{"--llm-step-overhead-ms", llm_step_overhead_ms,
                   NumberRange{0, 1000}}}) {
    std::string problem = OutOfRange(value, range);
    if (!problem.empty()) {
      return Status::InvalidArgument(fmt::format("{} {}", flag, problem));
    }
  }
  if (!(warmup_s >= 0 && warmup_s < duration_s)) {
    return Status::InvalidArgument(
        fmt::format("--warmup must be >= 0 and below --duration ({}), got {}",
                    duration_s, warmup_s));
  }
  if (!(max_queue_delay_ms >= 0)) {
    return Status::InvalidArgument(fmt::format(
        "--max-queue-delay must be >= 0, got {}", max_queue_delay_ms));
  }
  if (proxies < 1 || proxies > kMaxProxies) {
    return Status::InvalidArgument(
        fmt::format("--router-replicas must be from 1 to {}, got {}",
                    kMaxProxies, proxies));
  }
  return arrivals.Validate();
}

bool ServeReport::ok() const {
  return std::all_of(services.begin(), services.end(),
                     [](const ServiceServing& s) { return s.ok(); });
}

StatusOr<ServeReport> Serve(const cluster::ClusterState& state,
                            const workload::Workload& workload,
                            const profile::ProfileTable& profiles,
                            const ServeOptions& options,
                            const ServeProgressSink& progress) {
  MIGSERVE_RETURN_IF_ERROR(options.Validate());
  double arrivals = 0;
  for (const workload::Service& s : workload.services) {
    arrivals += options.load * s.throughput.value() * options.duration_s;
  }
  if (arrivals > kMaxArrivals) {
    return Status::InvalidArgument(fmt::format(
        "--duration {:g} s at --load {:g} is {:.3g} arrivals, more than the "
        "{:g} a run simulates; shorten --duration",
        options.duration_s, options.load, arrivals, kMaxArrivals));
  }
  std::map<std::string, std::vector<ReplicaRef>> replicas;
  for (const cluster::GpuState& gpu : state.gpus) {
    for (const cluster::Slot& slot : gpu.slots) {
      if (!slot.replica) continue;
      if (workload.FindService(slot.replica->service) < 0) {
        return Status::InvalidArgument(fmt::format(
            "{}: instance {}@{}: serves '{}', which {} does not have",
            gpu.id.ToString(), gpu.model->profiles[slot.instance.profile].name,
            slot.instance.start, slot.replica->service, workload.source));
      }
      replicas[slot.replica->service].push_back({&gpu, &slot});
    }
  }
  std::map<std::string, cluster::ServiceRoute> routes = cluster::Routes(state);
  ServeReport report;
  ProgressTimer timer(progress.every_s);
  const size_t total = workload.services.size();
  for (size_t i = 0; i < total; ++i) {
    const workload::Service& s = workload.services[i];
    auto tick = [&](double t) {
      if (progress.report && timer.Due()) {
        progress.report({s.name, i + 1, total, t, nullptr});
      }
    };
    ServiceServing served;
    switch (s.kind.traits().credit) {
      case workload::CreditSource::kProfileRows: {
        MIGSERVE_ASSIGN_OR_RETURN(
            served, ServeService(s, replicas[s.name], routes[s.name], profiles,
                                 options, tick));
        break;
      }
      case workload::CreditSource::kTokenModel: {
        MIGSERVE_ASSIGN_OR_RETURN(
            served, ServeLlmService(workload, s, replicas[s.name], options));
        break;
      }
    }
    if (progress.report) {
      progress.report({s.name, i + 1, total, options.duration_s, &served});
    }
    report.services.push_back(std::move(served));
  }
  return report;
}

}  // namespace migserve::serving
