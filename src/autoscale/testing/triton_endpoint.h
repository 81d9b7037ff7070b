// An emulated Triton metrics endpoint (GET /metrics, Triton's text format)
// for one replica: nv_inference_request_success and
// nv_inference_request_duration_us count requests served at a rate the
// test sets (the counters integrate it over wall time), nv_inference_count
// the inferences (samples) they held, `batch` each, and, once a p99 is
// set, the latency summary nv_inference_request_summary_us (Triton's
// summary_latencies). No requests are served: only what Prometheus scrapes.
#ifndef MIGSERVE_AUTOSCALE_TESTING_TRITON_ENDPOINT_H_
#define MIGSERVE_AUTOSCALE_TESTING_TRITON_ENDPOINT_H_

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace migserve::autoscale {

class TritonEndpoint {
 public:
  // Serves on 127.0.0.1 (a free port) for model `model`, at rate 0.
  explicit TritonEndpoint(std::string model);
  ~TritonEndpoint();

  void SetRate(double per_s);  // requests per second
  void SetBatch(int samples);  // inferences per request (1 until set)
  void SetP99Ms(double ms);
  std::string address() const;  // 127.0.0.1:port
  std::string Text();           // what /metrics answers now

 private:
  void Advance();  // counts the requests up to now

  std::string model_;
  std::mutex mu_;
  double rate_ = 0;
  double count_ = 0;
  int batch_ = 1;
  double p99_ms_ = -1;  // < 0: no summary
  std::chrono::steady_clock::time_point since_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_TESTING_TRITON_ENDPOINT_H_
