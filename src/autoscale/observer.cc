#include "autoscale/observer.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>

#include "boundary/number.h"
#include "boundary/quantity.h"

namespace migserve::autoscale {
namespace {

// The one series a query gives, or why there is none to use.
StatusOr<PromSeries> OneSeries(const PrometheusClient& prometheus,
                               const std::string& query, double start_s,
                               double end_s, double step_s) {
  MIGSERVE_ASSIGN_OR_RETURN(
      std::vector<PromSeries> series,
      prometheus.QueryRange(query, start_s, end_s, step_s));
  if (series.empty()) {
    return Status::NotFound(fmt::format("no series for {}", query));
  }
  if (series.size() > 1) {
    return Status::NotFound(fmt::format(
        "{} gives {} series; aggregate them (sum for a rate, max for a "
        "latency)",
        query, series.size()));
  }
  return series.front();
}

// True for an error that is the query's, not the server's.
bool QueryFault(const Status& status) {
  return status.code() == Status::Code::kNotFound ||
         status.code() == Status::Code::kInvalidArgument;
}

// The series of `service`'s replicas' inference counters: samples, as a
// workload's rates count them (a request of a batch of 4 is 4), not
// requests (nv_inference_request_success).
std::string Inferences(const std::string& service,
                       const ObserveOptions& options) {
  return fmt::format("nv_inference_count{{{}=\"{}\"}}", options.service_label,
                     service);
}

// Why `sample` of `query` cannot be a request rate at a step of the window
// up to `now_s` (finite, from 0 to the most a workload may require, not
// from the future), or "" when it can. NaN is not judged here: Prometheus
// gives it for a step without data (0/0), which is unknown, not absurd.
std::string AbsurdRate(const PromSample& sample, const std::string& query,
                       double now_s, double step_s) {
  if (sample.time_s > now_s + step_s / 2) {
    return fmt::format("{} gave a sample {:.0f} s in the future", query,
                       sample.time_s - now_s);
  }
  if (std::isnan(sample.value) || Rate::Of(sample.value).ok()) return "";
  return fmt::format("{} gave {:g} req/s, which {}", query, sample.value,
                     RangeRule(Rate::kRange));
}

// Puts the samples of `rate` in the window's steps as service `s`'s rates;
// if one of them cannot be a rate (AbsurdRate) or none is a number, the
// service is not observed at all and the problem says why: one absurd
// sample makes the whole series suspect.
void ReadRates(const PromSeries& rate, const std::string& query,
               const std::string& name, double now_s, double step,
               Observed* out, size_t s) {
  const double start = out->window.front().time_s;
  const long steps = static_cast<long>(out->window.size());
  std::vector<double> rates(steps, std::nan(""));
  bool numbers = false;
  for (const PromSample& sample : rate.samples) {
    std::string absurd = AbsurdRate(sample, query, now_s, step);
    if (!absurd.empty()) {
      out->problems.push_back(
          fmt::format("{}: {}; the series is ignored", name, absurd));
      return;
    }
    long k = std::lround((sample.time_s - start) / step);
    if (k >= 0 && k < steps && !std::isnan(sample.value)) {
      rates[k] = sample.value;
      numbers = true;
    }
  }
  if (!numbers) {
    out->problems.push_back(
        fmt::format("{}: {} gave no number (NaN) in the window", name, query));
    return;
  }
  for (long k = 0; k < steps; ++k) out->window[k].rates[s] = rates[k];
}

// The latest sample of the p99 `query` of `service`, in ms; NaN where it
// gives none. A sample out of range, or an `own` query (the service's
// `observe:`) Prometheus cannot answer, is named in `problems`; a default
// query's silence is not (Triton exports no summaries unless asked).
StatusOr<double> P99(const PrometheusClient& prometheus,
                     const std::string& service, const std::string& query,
                     bool own, double now_s, double step,
                     std::vector<std::string>* problems) {
  StatusOr<PromSeries> p99 = OneSeries(prometheus, query, now_s, now_s, step);
  if (!p99.ok()) {
    if (!QueryFault(p99.status())) return p99.status();
    // A default query's silence is not named; what it gives that is not a
    // latency is.
    if (own || p99.status().code() != Status::Code::kNotFound) {
      problems->push_back(
          fmt::format("{}: {}", service, p99.status().message()));
    }
    return std::nan("");
  }
  if (p99->samples.empty()) return std::nan("");
  double ms = p99->samples.back().value;
  if (InRange(ms, kLatencyMsRange)) return ms;
  if (!std::isnan(ms) || own) {
    // NaN is a summary with no request in its window: no latency yet.
    problems->push_back(
        fmt::format("{}: {} gave a p99 of {:g} ms, which {}; "
                    "ignored",
                    service, query, ms, RangeRule(kLatencyMsRange)));
  }
  return std::nan("");
}

// 1000 x the p99 of `service`'s histogram (seconds): the first of `names`
// each replica has (rate() drops the metric's name, so `or` keeps one
// series per replica and bucket).
std::string HistogramP99Ms(std::initializer_list<const char*> names,
                           const std::string& service,
                           const ObserveOptions& options) {
  std::string buckets;
  for (const char* name : names) {
    buckets += fmt::format("{}rate({}_bucket{{{}=\"{}\"}}[{}])",
                           buckets.empty() ? "" : " or ", name,
                           options.service_label, service, options.rate_window);
  }
  return fmt::format("1000 * histogram_quantile(0.99, sum by (le) ({}))",
                     buckets);
}

}  // namespace

std::string DefaultRateQuery(const std::string& service,
                             const ObserveOptions& options) {
  const std::string series = Inferences(service, options);
  const std::string rates =
      fmt::format("rate({}[{}])", series, options.rate_window);
  return fmt::format("sum({0}) and on() (count({0}) == count({1}))", rates,
                     series);
}

std::string DefaultReplicasQuery(const std::string& service,
                                 const ObserveOptions& options) {
  return fmt::format("count({})", Inferences(service, options));
}

std::string DefaultP99Query(const std::string& service,
                            const ObserveOptions& options) {
  return fmt::format(
      "max(nv_inference_request_summary_us{{{}=\"{}\",quantile=\"0.99\"}}) / "
      "1000",
      options.service_label, service);
}

std::string VllmRateQuery(const std::string& service,
                          const ObserveOptions& options) {
  const std::string finished =
      fmt::format("vllm:request_success_total{{{}=\"{}\"}}",
                  options.service_label, service);
  // Per replica (scrape target), as the default's guard counts them.
  const std::string rates = fmt::format("sum by (instance) (rate({}[{}]))",
                                        finished, options.rate_window);
  return fmt::format(
      "sum({0}) and on() (count({0}) == count(sum by (instance) ({1})))", rates,
      finished);
}

std::string VllmReplicasQuery(const std::string& service,
                              const ObserveOptions& options) {
  return fmt::format("count(vllm:num_requests_running{{{}=\"{}\"}})",
                     options.service_label, service);
}

std::string VllmP99Query(const std::string& service,
                         const ObserveOptions& options) {
  return HistogramP99Ms({"vllm:e2e_request_latency_seconds"}, service, options);
}

std::string VllmTtftP99Query(const std::string& service,
                             const ObserveOptions& options) {
  return HistogramP99Ms({"vllm:time_to_first_token_seconds"}, service, options);
}

std::string VllmTpotP99Query(const std::string& service,
                             const ObserveOptions& options) {
  return HistogramP99Ms({"vllm:request_time_per_output_token_seconds",
                         "vllm:inter_token_latency_seconds",
                         "vllm:time_per_output_token_seconds"},
                        service, options);
}

double LlmP99Ms(const llm::LlmTerms& terms, double latency_slo_ms,
                double request_p99_ms, double ttft_p99_ms, double tpot_p99_ms) {
  double worst = std::nan("");
  for (auto [p99, slo] : {std::pair{request_p99_ms, latency_slo_ms},
                          {ttft_p99_ms, terms.ttft_ms},
                          {tpot_p99_ms, terms.tpot_ms}}) {
    if (std::isnan(p99) || !(slo > 0)) continue;
    double share = p99 / slo;
    if (std::isnan(worst) || share > worst) worst = share;
  }
  return worst * latency_slo_ms;
}

StatusOr<Observed> Observe(const PrometheusClient& prometheus,
                           const std::vector<workload::Service>& services,
                           const ObserveOptions& options, double now_s,
                           double window_s) {
  const double step = options.step_s;
  const int steps = std::max(1, static_cast<int>(std::floor(window_s / step)));
  const double start = now_s - (steps - 1) * step;
  Observed out;
  for (int k = 0; k < steps; ++k) {
    out.window.push_back({start + k * step,
                          std::vector<double>(services.size(), std::nan("")),
                          {}});
  }
  out.window.back().p99_ms.assign(services.size(), std::nan(""));
  out.changing.assign(services.size(), false);
  for (size_t s = 0; s < services.size(); ++s) {
    const workload::Service& service = services[s];
    const bool vllm = service.kind.traits().engine == workload::Engine::kVllm;
    std::string rate_query = !service.observe.rate.empty()
                                 ? service.observe.rate
                             : vllm ? VllmRateQuery(service.name, options)
                                    : DefaultRateQuery(service.name, options);
    StatusOr<PromSeries> rate =
        OneSeries(prometheus, rate_query, start, now_s, step);
    if (!rate.ok() && !QueryFault(rate.status())) return rate.status();
    const bool now = rate.ok() && !rate->samples.empty() &&
                     rate->samples.back().time_s >= now_s - step / 2;
    bool changing = false;
    if (!now && service.observe.rate.empty()) {
      // The default query gives nothing while the set of replicas changes;
      // if replicas answer, the steps since are unknown, not stale.
      StatusOr<PromSeries> replicas =
          OneSeries(prometheus,
                    vllm ? VllmReplicasQuery(service.name, options)
                         : DefaultReplicasQuery(service.name, options),
                    now_s, now_s, step);
      if (!replicas.ok() && !QueryFault(replicas.status())) {
        return replicas.status();
      }
      changing = replicas.ok() && !replicas->samples.empty() &&
                 replicas->samples.back().value > 0;
      out.changing[s] = changing;
    }
    if (!rate.ok() && !changing) {
      out.problems.push_back(
          fmt::format("{}: {}", service.name, rate.status().message()));
    } else if (!now && !changing) {
      out.problems.push_back(fmt::format(
          "{}: stale: {} gives no sample now{}", service.name, rate_query,
          rate->samples.empty()
              ? std::string()
              : fmt::format(" (the last {:.0f} s ago)",
                            now_s - rate->samples.back().time_s)));
    } else if (rate.ok()) {
      ReadRates(*rate, rate_query, service.name, now_s, step, &out, s);
    }
    const bool own = !service.observe.p99_ms.empty();
    std::string p99_query = own    ? service.observe.p99_ms
                            : vllm ? VllmP99Query(service.name, options)
                                   : DefaultP99Query(service.name, options);
    MIGSERVE_ASSIGN_OR_RETURN(
        double p99, P99(prometheus, service.name, p99_query, own, now_s, step,
                        &out.problems));
    if (vllm && !own) {
      MIGSERVE_ASSIGN_OR_RETURN(
          double ttft,
          P99(prometheus, service.name, VllmTtftP99Query(service.name, options),
              false, now_s, step, &out.problems));
      MIGSERVE_ASSIGN_OR_RETURN(
          double tpot,
          P99(prometheus, service.name, VllmTpotP99Query(service.name, options),
              false, now_s, step, &out.problems));
      p99 = LlmP99Ms(*service.tokens, service.latency_ms, p99, ttft, tpot);
    }
    out.window.back().p99_ms[s] = p99;
  }
  return out;
}

}  // namespace migserve::autoscale
