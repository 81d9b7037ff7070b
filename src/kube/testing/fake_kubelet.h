// Plays the kubelets of a stand-in API server's cluster, for tests: a pod
// that appears turns Ready (phase Running, condition Ready) after a delay;
// a hook hears when a pod starts or stops running, so a test can mark its
// MIG instance in use the way a CUDA process would.
#ifndef MIGSERVE_KUBE_TESTING_FAKE_KUBELET_H_
#define MIGSERVE_KUBE_TESTING_FAKE_KUBELET_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kube/testing/api_server_standin.h"

namespace migserve::kube {

class FakeKubelet {
 public:
  using Hook = std::function<void(const nlohmann::json& pod, bool running)>;

  // `server` is not owned and outlives the kubelet.
  FakeKubelet(ApiServerStandIn* server, double ready_after_s, Hook hook);
  ~FakeKubelet();

 private:
  void Work();

  ApiServerStandIn* server_;
  std::chrono::duration<double> delay_;
  Hook hook_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>>
      due_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_TESTING_FAKE_KUBELET_H_
