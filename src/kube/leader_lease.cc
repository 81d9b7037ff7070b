#include "kube/leader_lease.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <ctime>

#include "boundary/json_fields.h"
#include "kube/micro_time.h"

namespace migserve::kube {
namespace {

using Json = nlohmann::json;

}  // namespace

Status LeaseOptions::Validate() const {
  if (name.empty()) return Status::InvalidArgument("lease name is empty");
  if (namespace_.empty()) {
    return Status::InvalidArgument("lease namespace is empty");
  }
  if (identity.empty()) {
    return Status::InvalidArgument("lease identity is empty");
  }
  if (!(retry_s > 0 && retry_s < renew_deadline_s &&
        renew_deadline_s < duration_s)) {
    return Status::InvalidArgument(fmt::format(
        "lease timing: need 0 < retry period ({} s) < renew deadline ({} s) "
        "< lease duration ({} s)",
        retry_s, renew_deadline_s, duration_s));
  }
  return Status::Ok();
}

std::string DefaultLeaseIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}_{}", host[0] ? host : "migserve", getpid());
}

LeaderLease::LeaderLease(KubeClient* client, LeaseOptions options)
    : client_(client), options_(std::move(options)) {}

LeaderLease::~LeaderLease() { StopRenewing(); }

std::string LeaderLease::Path() const {
  return fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}",
                     options_.namespace_, options_.name);
}

StatusOr<bool> LeaderLease::TryAcquireOrRenew() {
  // A renewal counts from before it was asked for: a process stopped after
  // the API server answered must not count the pause as leadership.
  const Clock::time_point asked = Clock::now();
  StatusOr<bool> won = TryAcquireOrRenewAt(asked);
  MutexLock lock(&mu_);
  last_error_ = won.ok() ? "" : won.status().message();
  return won;
}

StatusOr<bool> LeaderLease::TryAcquireOrRenewAt(Clock::time_point asked) {
  const std::string& me = options_.identity;
  int duration = static_cast<int>(std::ceil(options_.duration_s));
  std::string now = MicroTimeNow();
  StatusOr<Json> lease = client_->Get(Path());
  if (lease.status().code() == Status::Code::kNotFound) {
    Json fresh = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata",
         {{"name", options_.name}, {"namespace", options_.namespace_}}},
        {"spec",
         {{"holderIdentity", me},
          {"leaseDurationSeconds", duration},
          {"acquireTime", now},
          {"renewTime", now},
          {"leaseTransitions", 0}}}};
    StatusOr<Json> created = client_->Create(
        fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases",
                    options_.namespace_),
        fresh);
    return Won(created.status(), asked, 0);
  }
  MIGSERVE_RETURN_IF_ERROR(lease.status());
  const Json* found = ObjectAt(*lease, "spec");
  Json spec = found != nullptr ? *found : Json::object();
  std::string holder = StringAt(spec, "holderIdentity").value_or("");
  int held_for = IntAt(spec, "leaseDurationSeconds").value_or(duration);
  std::string record = holder + "|" + StringAt(spec, "renewTime").value_or("");
  {
    MutexLock lock(&mu_);
    Clock::time_point at = Clock::now();
    if (record != observed_record_) {
      observed_record_ = record;
      observed_at_ = at;
    }
    holder_ = holder;
    if (!holder.empty() && holder != me &&
        at < observed_at_ + std::chrono::seconds(held_for)) {
      return false;
    }
  }
  Json patch = {
      {"metadata",
       {{"resourceVersion",
         StringField(*lease, "metadata", "resourceVersion").value_or("")}}},
      {"spec",
       {{"holderIdentity", me},
        {"leaseDurationSeconds", duration},
        {"renewTime", now}}}};
  long transitions = IntAt(spec, "leaseTransitions").value_or(0);
  if (holder != me) {
    patch["spec"]["acquireTime"] = now;
    patch["spec"]["leaseTransitions"] = ++transitions;
  }
  return Won(client_->Patch(Path(), patch).status(), asked, transitions);
}

StatusOr<bool> LeaderLease::Won(const Status& write, Clock::time_point asked,
                                long transitions) {
  // A conflict: another candidate wrote the lease since it was read.
  if (write.code() == Status::Code::kAborted) return false;
  MIGSERVE_RETURN_IF_ERROR(write);
  MutexLock lock(&mu_);
  renewed_ = asked;
  ever_renewed_ = true;
  holder_ = options_.identity;
  epoch_ = transitions;
  return true;
}

Status LeaderLease::Acquire(
    const std::atomic<bool>& stop,
    const std::function<void(const std::string&)>& progress) {
  MIGSERVE_RETURN_IF_ERROR(options_.Validate());
  std::string told;
  while (!stop) {
    StatusOr<bool> held = TryAcquireOrRenew();
    if (held.ok() && *held) break;
    // Not allowed (401, 403): waiting would not change that, and a process
    // that exits with the reason shows it where it is looked for.
    if (held.status().code() == Status::Code::kFailedPrecondition) {
      return Status::FailedPrecondition(
          fmt::format("lease {}/{}: {}", options_.namespace_, options_.name,
                      held.status().message()));
    }
    std::string line =
        held.ok()
            ? fmt::format("lease {}/{} is held by {}; waiting",
                          options_.namespace_, options_.name, holder())
            : fmt::format("lease {}/{}: {}; retrying", options_.namespace_,
                          options_.name, held.status().message());
    if (progress && line != told) progress(line);
    told = line;
    MutexLock lock(&mu_);
    auto until =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(options_.retry_s));
    while (!stop && lock.WaitUntil(&wake_, until)) {
    }
  }
  if (stop) return Status::Aborted("stopped while waiting for the lease");
  if (progress) {
    progress(fmt::format("acquired lease {}/{} as {}", options_.namespace_,
                         options_.name, options_.identity));
  }
  MutexLock lock(&mu_);
  stopping_ = false;
  renewer_ = std::thread([this] { RenewLoop(); });
  return Status::Ok();
}

void LeaderLease::RenewLoop() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    auto until =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(options_.retry_s));
    while (!stopping_ && lock.WaitUntil(&wake_, until)) {
    }
    if (stopping_) break;
    // Past the renew deadline the leadership is over for good, as with
    // client-go: a process that paused must not take a free lease back
    // and carry on with what it was doing before the pause.
    if (Clock::now() - renewed_ >=
        std::chrono::duration<double>(options_.renew_deadline_s)) {
      ever_renewed_ = false;
      break;
    }
    lock.Unlock();
    StatusOr<bool> renewed = TryAcquireOrRenew();
    lock.Lock();
    // Someone else holds it: this process is no longer the leader.
    if (renewed.ok() && !*renewed) {
      ever_renewed_ = false;
      break;
    }
  }
}

bool LeaderLease::Held() const { return Fence().ok(); }

std::string LeaderLease::holder() const {
  MutexLock lock(&mu_);
  return holder_;
}

long LeaderLease::epoch() const {
  MutexLock lock(&mu_);
  return epoch_;
}

Status LeaderLease::Fence() const {
  MutexLock lock(&mu_);
  double since = std::chrono::duration<double>(Clock::now() - renewed_).count();
  if (ever_renewed_ && since < options_.renew_deadline_s) return Status::Ok();
  std::string why;
  if (!last_error_.empty()) {
    why = "its renewal failed: " + last_error_;
  } else if (!ever_renewed_) {
    why = holder_.empty() || holder_ == options_.identity
              ? std::string("it does not hold it")
              : "it is held by " + holder_;
  } else {
    why = fmt::format(
        "its last renewal was {:.3g} s ago, past the renew "
        "deadline of {:g} s",
        since, options_.renew_deadline_s);
  }
  return Status::FailedPrecondition(
      fmt::format("fenced: this process cannot prove it holds lease {}/{} "
                  "({}); it writes nothing more",
                  options_.namespace_, options_.name, why));
}

void LeaderLease::StopRenewing() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (renewer_.joinable()) renewer_.join();
}

Status LeaderLease::Release() {
  StopRenewing();
  {
    MutexLock lock(&mu_);
    if (!ever_renewed_) return Status::Ok();
    ever_renewed_ = false;
  }
  MIGSERVE_ASSIGN_OR_RETURN(Json lease, client_->Get(Path()));
  if (StringField(lease, "spec", "holderIdentity") != options_.identity) {
    return Status::Ok();
  }
  Json patch = {
      {"metadata",
       {{"resourceVersion",
         StringField(lease, "metadata", "resourceVersion").value_or("")}}},
      {"spec",
       {{"holderIdentity", ""},
        {"leaseDurationSeconds", 1},
        {"renewTime", MicroTimeNow()}}}};
  return client_->Patch(Path(), patch).status();
}

}  // namespace migserve::kube
