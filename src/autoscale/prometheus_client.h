// Reading a Prometheus server through its HTTP API: range queries
// (GET /api/v1/query_range), the answer's matrix as series of samples.
#ifndef MIGSERVE_AUTOSCALE_PROMETHEUS_CLIENT_H_
#define MIGSERVE_AUTOSCALE_PROMETHEUS_CLIENT_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "util/status_or.h"

namespace migserve::autoscale {

struct PromSample {
  double time_s = 0;  // Unix time
  double value = 0;   // NaN and infinities as Prometheus gives them
};

struct PromSeries {
  std::map<std::string, std::string> labels;
  std::vector<PromSample> samples;  // time order
};

// The series of a query_range answer: `body` as the server sent it with
// HTTP status `http_status`. Returns InvalidArgument with the server's
// error when it refused the query (400, 422: bad PromQL) or where a
// sample's value is not a number (the series', not the server's fault:
// " 100 ", "1_000", "Infinity"), Unavailable for any other error or an
// answer that is not the API's matrix JSON.
StatusOr<std::vector<PromSeries>> ParseQueryRange(const std::string& body,
                                                  int http_status);

// How long and how much one answer may take: a server that trickles a byte
// at a time is cut off at `answer_deadline_s`, one that streams without
// end at `max_answer_bytes`, one silent for `read_timeout_s` then, and
// either as soon as the process is interrupted (SIGTERM, SIGINT).
struct PrometheusLimits {
  int connect_timeout_s = 5;
  int read_timeout_s = 10;
  double answer_deadline_s = 30;
  size_t max_answer_bytes = 64 << 20;
};

class PrometheusClient {
 public:
  // `url`: http://host:port, with a path prefix if the server has one
  // (--web.route-prefix). Returns InvalidArgument for another form.
  static StatusOr<PrometheusClient> Make(const std::string& url,
                                         PrometheusLimits limits = {});

  // The series `query` gives at start_s, start_s + step_s, ... up to end_s.
  // Returns Unavailable when the server cannot be reached or answers
  // other than the API does, InvalidArgument with the server's error (bad
  // PromQL), each naming the query.
  StatusOr<std::vector<PromSeries>> QueryRange(const std::string& query,
                                               double start_s, double end_s,
                                               double step_s) const;

  const std::string& url() const { return url_; }

 private:
  PrometheusClient(std::string url, std::string origin, std::string prefix,
                   PrometheusLimits limits)
      : url_(std::move(url)),
        origin_(std::move(origin)),
        prefix_(std::move(prefix)),
        limits_(limits) {}

  std::string url_;     // as given
  std::string origin_;  // http://host:port
  std::string prefix_;  // "" or "/prefix"
  PrometheusLimits limits_;
};

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_PROMETHEUS_CLIENT_H_
