#include "proxy/testing/emulated_replica.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "util/testing/http_listener.h"

namespace migserve::proxy {

EmulatedReplica::EmulatedReplica(EmulatedReplicaOptions options)
    : options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {
  int threads = options_.threads;
  server_->new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  server_->set_tcp_nodelay(true);
  // One request per connection ("Connection: close"): the proxy opens
  // another for the next. Connections kept open would each hold a thread
  // that looks for a request every 10 ms (cpp-httplib's keep-alive loop),
  // most of this stand-in's CPU behind nginx's 64 kept per upstream.
  server_->set_keep_alive_max_count(1);
  server_->Get(R"(/v2/models/([^/]+))", [this](const httplib::Request& req,
                                               httplib::Response& res) {
    res.set_content(nlohmann::json({{"name", Check(req)}}).dump() + "\n",
                    "application/json");
  });
  server_->Post(R"(/v2/models/([^/]+)/infer)",
                [this](const httplib::Request& req, httplib::Response& res) {
                  Check(req);
                  ++hits_;
                  ++in_flight_;
                  if (options_.batch_ms) {
                    std::future<void> done;
                    {
                      std::lock_guard lock(mu_);
                      queue_.emplace_back();
                      done = queue_.back().get_future();
                    }
                    queued_.notify_one();
                    done.wait();
                  }
                  --in_flight_;
                  res.set_content("{}", "application/json");
                });
  listener_ = testing::ListenOnLocalPort(server_.get(), &port_);
  if (options_.batch_ms) {
    for (int w = 0; w < options_.workers; ++w) {
      workers_.emplace_back([this] { Work(); });
    }
  }
}

EmulatedReplica::~EmulatedReplica() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  queued_.notify_all();
  for (std::thread& w : workers_) w.join();
  for (std::promise<void>& p : queue_) p.set_value();
  server_->stop();
  listener_.join();
}

std::string EmulatedReplica::Check(const httplib::Request& req) {
  std::string model = req.matches[1];
  std::string service = req.get_header_value("migserve-service");
  if ((!options_.model.empty() && model != options_.model) ||
      (!service.empty() && !options_.service.empty() &&
       service != options_.service)) {
    ++misrouted_;
  }
  return model;
}

void EmulatedReplica::Work() {
  for (;;) {
    std::vector<std::promise<void>> batch;
    {
      std::unique_lock lock(mu_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      size_t n = std::min<size_t>(queue_.size(), options_.max_batch);
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(
        options_.batch_ms(static_cast<int>(batch.size()))));
    for (std::promise<void>& p : batch) p.set_value();
  }
}

}  // namespace migserve::proxy
