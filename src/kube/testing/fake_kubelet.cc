#include "kube/testing/fake_kubelet.h"

#include <algorithm>

namespace migserve::kube {

FakeKubelet::FakeKubelet(ApiServerStandIn* server, double ready_after_s,
                         Hook hook)
    : server_(server), delay_(ready_after_s), hook_(std::move(hook)) {
  server_->AddObserver([this](const std::string& type, const std::string& path,
                              const nlohmann::json& object) {
    if (path.find("/pods/") == std::string::npos) return;
    if (type == "DELETED") {
      if (hook_) hook_(object, false);
      return;
    }
    if (type != "ADDED") return;
    std::lock_guard lock(mu_);
    if (stopping_) return;
    due_.emplace_back(
        std::chrono::steady_clock::now() +
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                delay_),
        path);
    wake_.notify_all();
  });
  worker_ = std::thread([this] { Work(); });
}

FakeKubelet::~FakeKubelet() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void FakeKubelet::Work() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (due_.empty()) {
      wake_.wait(lock);
      continue;
    }
    auto first = std::min_element(due_.begin(), due_.end());
    // A copy: the list may grow, and move, while this thread waits.
    auto when = first->first;
    if (std::chrono::steady_clock::now() < when) {
      wake_.wait_until(lock, when);
      continue;
    }
    std::string path = first->second;
    due_.erase(first);
    lock.unlock();
    // The hook runs inside the update, so it precedes any later delete's.
    server_->Update(path, [&](nlohmann::json* p) {
      (*p)["status"] = {
          {"phase", "Running"},
          {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
      if (hook_) hook_(*p, true);
    });
    lock.lock();
  }
}

}  // namespace migserve::kube
