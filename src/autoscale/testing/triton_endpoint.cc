#include "autoscale/testing/triton_endpoint.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cmath>

#include "util/testing/http_listener.h"

namespace migserve::autoscale {

TritonEndpoint::TritonEndpoint(std::string model)
    : model_(std::move(model)),
      since_(std::chrono::steady_clock::now()),
      server_(std::make_unique<httplib::Server>()) {
  // One worker, and a connection closed after each scrape: a test may run
  // a hundred of these, and stopping one must not wait for a scraper's
  // idle keep-alive connection to time out.
  server_->new_task_queue = [] { return new httplib::ThreadPool(1); };
  server_->set_keep_alive_max_count(1);
  server_->Get("/metrics",
               [this](const httplib::Request&, httplib::Response& res) {
                 res.set_content(Text(), "text/plain; version=0.0.4");
               });
  thread_ = testing::ListenOnLocalPort(server_.get(), &port_);
}

TritonEndpoint::~TritonEndpoint() {
  server_->stop();
  thread_.join();
}

void TritonEndpoint::Advance() {
  auto now = std::chrono::steady_clock::now();
  count_ += rate_ * std::chrono::duration<double>(now - since_).count();
  since_ = now;
}

void TritonEndpoint::SetRate(double per_s) {
  std::lock_guard lock(mu_);
  Advance();
  rate_ = per_s;
}

void TritonEndpoint::SetBatch(int samples) {
  std::lock_guard lock(mu_);
  batch_ = samples;
}

void TritonEndpoint::SetP99Ms(double ms) {
  std::lock_guard lock(mu_);
  p99_ms_ = ms;
}

std::string TritonEndpoint::address() const {
  return fmt::format("127.0.0.1:{}", port_);
}

std::string TritonEndpoint::Text() {
  std::lock_guard lock(mu_);
  Advance();
  const std::string labels = fmt::format("model=\"{}\",version=\"1\"", model_);
  long requests = std::lround(std::floor(count_));
  // Every request took 5 ms: the mean the duration counter gives.
  std::string out = fmt::format(
      "# HELP nv_inference_request_success Number of successful inference "
      "requests, all batch sizes\n"
      "# TYPE nv_inference_request_success counter\n"
      "nv_inference_request_success{{{0}}} {1}\n"
      "# HELP nv_inference_count Number of inferences performed (does not "
      "include cached requests)\n"
      "# TYPE nv_inference_count counter\n"
      "nv_inference_count{{{0}}} {3}\n"
      "# HELP nv_inference_request_duration_us Cumulative inference request "
      "duration in microseconds (includes cached requests)\n"
      "# TYPE nv_inference_request_duration_us counter\n"
      "nv_inference_request_duration_us{{{0}}} {2}\n",
      labels, requests, requests * 5000, requests * batch_);
  if (p99_ms_ >= 0) {
    out += fmt::format(
        "# HELP nv_inference_request_summary_us Summary of inference request "
        "duration in microseconds (includes cached requests)\n"
        "# TYPE nv_inference_request_summary_us summary\n"
        "nv_inference_request_summary_us{{{0},quantile=\"0.99\"}} {1}\n"
        "nv_inference_request_summary_us_sum{{{0}}} {2}\n"
        "nv_inference_request_summary_us_count{{{0}}} {3}\n",
        labels, p99_ms_ * 1000, requests * 5000, requests);
  }
  return out;
}

}  // namespace migserve::autoscale
