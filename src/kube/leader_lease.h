// Leader election on a coordination.k8s.io/v1 Lease, as Kubernetes' own
// controllers do it: a candidate takes the Lease when it is free or its
// holder has not renewed it for leaseDurationSeconds (measured on this
// process's clock from when the record last changed, so clocks need not
// agree), renews it every retry period, and counts as leader only while
// its last renewal is younger than the renew deadline. The deadline is
// shorter than the duration, so an old leader stops acting before anyone
// may take over. Every write carries the resourceVersion it read: of two
// candidates racing for a free Lease, one wins and one gets a conflict.
#ifndef MIGSERVE_KUBE_LEADER_LEASE_H_
#define MIGSERVE_KUBE_LEADER_LEASE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <string>
#include <thread>

#include "kube/kube_client.h"
#include "util/mutex.h"

namespace migserve::kube {

struct LeaseOptions {
  std::string name = "migserve-controller";
  std::string namespace_;
  std::string identity;  // unique per process: hostname and pid by default
  double duration_s = 15;
  double renew_deadline_s = 10;
  double retry_s = 2;

  // InvalidArgument unless names are set and 0 < retry < renew deadline <
  // duration.
  Status Validate() const;
};

// "<hostname>_<pid>": in a pod the hostname is the pod's name.
std::string DefaultLeaseIdentity();

class LeaderLease {
 public:
  // `client` is not owned and outlives the lease.
  LeaderLease(KubeClient* client, LeaseOptions options);
  // Stops renewing without handing the lease back (as a killed process).
  ~LeaderLease();

  // Tries every retry period until this process holds the lease, then
  // renews it on a thread of its own. Returns Aborted if `stop` turns true
  // first, and FailedPrecondition at once where the API server refuses the
  // lease to this process (401, 403). `progress` (may be empty) hears who
  // holds it while waiting.
  Status Acquire(const std::atomic<bool>& stop,
                 const std::function<void(const std::string&)>& progress);

  // True while the last successful renewal is younger than the renew
  // deadline.
  bool Held() const;

  // The holder seen in the Lease at the last attempt.
  std::string holder() const;

  // The Lease's leaseTransitions when this process last took or renewed
  // it: a fencing token that grows with every change of holder, so that a
  // write carrying an older one comes from a leader that was replaced.
  long epoch() const;

  // OK while Held(); else FailedPrecondition saying why (a renewal the API
  // server refused, such as a 403, names that answer): what every write
  // of the leader asks first (KubeClient::SetFence).
  Status Fence() const;

  // Stops renewing and clears the holder, so that a waiting candidate
  // takes over at its next try instead of after the lease duration.
  Status Release();

  // One attempt to take or renew the lease: true if this process holds it
  // afterwards.
  StatusOr<bool> TryAcquireOrRenew();

 private:
  using Clock = std::chrono::steady_clock;
  std::string Path() const;
  // TryAcquireOrRenew's attempt, asked at `asked`.
  StatusOr<bool> TryAcquireOrRenewAt(Clock::time_point asked);
  // The outcome of a create or update of the lease, asked at `asked`, that
  // made this process its holder with `transitions` if it succeeded: true,
  // false on a conflict, else the error.
  StatusOr<bool> Won(const Status& write, Clock::time_point asked,
                     long transitions);
  void RenewLoop();
  void StopRenewing();

  KubeClient* client_;
  LeaseOptions options_;

  mutable Mutex mu_;
  std::condition_variable wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread renewer_;
  // Last successful acquire or renew.
  Clock::time_point renewed_ GUARDED_BY(mu_){};
  bool ever_renewed_ GUARDED_BY(mu_) = false;
  // Holder and renewTime last seen.
  std::string observed_record_ GUARDED_BY(mu_);
  Clock::time_point observed_at_ GUARDED_BY(mu_){};
  std::string holder_ GUARDED_BY(mu_);
  long epoch_ GUARDED_BY(mu_) = 0;
  std::string last_error_ GUARDED_BY(mu_);  // of the last attempt
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_LEADER_LEASE_H_
