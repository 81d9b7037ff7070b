// A stand-in for one language-model replica behind the proxy (vLLM's
// OpenAI server, reduced to what routing needs): an HTTP server on
// 127.0.0.1 that answers POST /v1/chat/completions and /v1/completions with
// `tokens` tokens `token_ms` apart, streamed as server-sent events when the
// body asks ("stream": true), each chunk naming the replica; GET /health.
// It counts the requests it got, those in flight, and those meant for
// another service (a body `model` that is neither its service nor its
// model, without a header naming its service).
#ifndef MIGSERVE_PROXY_TESTING_EMULATED_OPENAI_REPLICA_H_
#define MIGSERVE_PROXY_TESTING_EMULATED_OPENAI_REPLICA_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}  // namespace httplib

namespace migserve::proxy {

struct EmulatedOpenAiOptions {
  std::string name;     // said in every chunk ("replica")
  std::string service;  // what it serves
  std::string model;
  int tokens = 4;
  double token_ms = 0;
};

class EmulatedOpenAiReplica {
 public:
  explicit EmulatedOpenAiReplica(EmulatedOpenAiOptions options);
  ~EmulatedOpenAiReplica();
  EmulatedOpenAiReplica(const EmulatedOpenAiReplica&) = delete;
  EmulatedOpenAiReplica& operator=(const EmulatedOpenAiReplica&) = delete;

  int port() const { return port_; }
  int hits() const { return hits_; }
  int in_flight() const { return in_flight_; }
  int misrouted() const { return misrouted_; }

 private:
  EmulatedOpenAiOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  int port_ = 0;
  std::atomic<int> hits_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> misrouted_{0};
};

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_EMULATED_OPENAI_REPLICA_H_
