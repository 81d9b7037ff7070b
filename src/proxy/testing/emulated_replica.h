// A stand-in for one replica's model server behind the proxy: an HTTP
// server on 127.0.0.1 that answers POST /v2/models/<model>/infer as a
// dynamic batcher does (queueing/replica_queue.h): a free worker takes up to
// max_batch queued requests at once and holds them for batch_ms(b), then
// answers them all. Without batch_ms it answers at once. It answers GET
// /v2/models/<model> (metadata: its model's name) too, and counts every
// request that was not meant for it: one for another model, or whose
// migserve-service header names another service.
#ifndef MIGSERVE_PROXY_TESTING_EMULATED_REPLICA_H_
#define MIGSERVE_PROXY_TESTING_EMULATED_REPLICA_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace migserve::proxy {

struct EmulatedReplicaOptions {
  int max_batch = 1;
  int workers = 1;                      // MPS processes
  std::function<double(int)> batch_ms;  // empty: answer at once
  int threads = 32;                     // HTTP connections served at once
  std::string service;                  // what it serves; "": anything
  std::string model;
};

class EmulatedReplica {
 public:
  explicit EmulatedReplica(EmulatedReplicaOptions options = {});
  ~EmulatedReplica();
  EmulatedReplica(const EmulatedReplica&) = delete;
  EmulatedReplica& operator=(const EmulatedReplica&) = delete;

  int port() const { return port_; }
  // Requests received so far, and those not answered yet.
  int hits() const { return hits_; }
  int in_flight() const { return in_flight_; }
  // Requests meant for another service or model.
  int misrouted() const { return misrouted_; }

 private:
  void Work();
  // Counts `req` if it was not meant for this replica; returns the model.
  std::string Check(const httplib::Request& req);

  EmulatedReplicaOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable queued_;
  std::deque<std::promise<void>> queue_;
  bool stopping_ = false;
  int port_ = 0;
  std::atomic<int> hits_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> misrouted_{0};
};

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_EMULATED_REPLICA_H_
