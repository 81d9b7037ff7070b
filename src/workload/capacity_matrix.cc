#include "workload/capacity_matrix.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <set>

#include "profile/capacity.h"
#include "util/interrupt.h"
#include "util/mutex.h"
#include "util/parallel.h"
#include "util/progress_timer.h"
#include "workload/replica_credit.h"

namespace migserve::workload {
namespace {

// How far the credits of `n` services on `gpu` are: told to `progress`
// (may be empty) from the thread that finishes a service, when a line is
// due, the last service excepted (the phase is over then).
class CreditProgress {
 public:
  CreditProgress(LogSink progress, double every_s, int n,
                 const std::string& gpu)
      : progress_(std::move(progress)), timer_(every_s), n_(n), gpu_(gpu) {}

  void Finished() {
    if (!progress_) return;
    MutexLock lock(&mu_);
    ++done_;
    if (done_ == n_ || !timer_.Due()) return;
    double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_)
            .count();
    progress_(
        fmt::format("credits: {} of {} services on {}, about {:.0f} s "
                    "left",
                    done_, n_, gpu_, spent * (n_ - done_) / done_));
  }

 private:
  LogSink progress_;
  Mutex mu_;
  ProgressTimer timer_ GUARDED_BY(mu_);
  int done_ GUARDED_BY(mu_) = 0;
  const int n_;
  const std::string gpu_;
  const std::chrono::steady_clock::time_point begin_ =
      std::chrono::steady_clock::now();
};

}  // namespace

StatusOr<CapacityMatrix> CapacityMatrix::Build(
    const Workload& workload, const profile::ProfileTable& profiles,
    const mig::GpuModel& gpu, bool every_service_fits, LogSink progress,
    double progress_every_s) {
  std::vector<double> required;
  for (const Service& s : workload.services) {
    required.push_back(workload.Demand(s));
  }
  int num_profiles = static_cast<int>(gpu.profiles.size());
  CapacityMatrix m(num_profiles, std::move(required));
  // The credits, each service's on a thread of its own (--jobs): the
  // searches dominate the time of an optimize at fleet scale.
  int n = static_cast<int>(workload.services.size());
  CreditProgress told(std::move(progress), progress_every_s, n, gpu.name);
  ParallelFor(n, [&](int j) {
    m.Fill(workload, profiles, workload.services[j], gpu, j);
    told.Finished();
  });
  if (Interrupted()) {
    return Status::Aborted(fmt::format(
        "interrupted while computing the credits of {}'s {} services",
        workload.source, n));
  }
  for (int j = 0; j < n && every_service_fits; ++j) {
    const Service& s = workload.services[j];
    auto where = [&](const char* field) {
      return fmt::format("{}:{}: services[{}]{}", workload.source, s.line, j,
                         field);
    };
    if (s.kind.traits().credit == CreditSource::kTokenModel) {
      // The token model says why on each profile.
      std::string why = m.FitsNone(j, gpu);
      if (why.empty()) continue;
      return Status::InvalidArgument(
          fmt::format("{}: service '{}' fits no profile of {}: {}", where(""),
                      s.name, gpu.name, why));
    }
    if (!profiles.HasModel(s.model, gpu.name)) {
      std::vector<std::string> known = profiles.Models(gpu.name);
      std::set<std::string> measured_on;
      for (const profile::ProfileRow& row : profiles.rows) {
        if (row.model == s.model) measured_on.insert(row.gpu);
      }
      return Status::InvalidArgument(fmt::format(
          "{}: model '{}' has no rows for {} in {}{}; it has rows for: {}",
          where(".model"), s.model, gpu.name, profiles.source,
          measured_on.empty() ? ""
                              : fmt::format(" (it was measured on {})",
                                            fmt::join(measured_on, ", ")),
          known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
    bool any = false;
    for (int p = 0; p < num_profiles; ++p) {
      any = any || m.cells_[j * num_profiles + p].capacity > 0;
    }
    if (any) continue;
    const profile::CapacityLimits limits = workload.TermsOf(s).limits;
    auto best = profile::BestLatency(profiles, gpu, workload.mig, s.model,
                                     workload.max_procs);
    if (!best) {
      return Status::InvalidArgument(fmt::format(
          "{}: service '{}' fits no profile: no measured point of '{}' fits "
          "an instance's memory with at most {} process(es)",
          where(""), s.name, s.model, workload.max_procs));
    }
    if (*best <= limits.latency_limit_ms) {
      return Status::InvalidArgument(fmt::format(
          "{}: service '{}' fits no profile: no measured point of '{}' keeps "
          "its p99 latency within the SLO of {} ms under random arrivals "
          "(capacity_model: p99; its lowest measured latency is {:.6g} ms)",
          where(".latency_ms"), s.name, s.model, s.latency_ms, *best));
    }
    return Status::InvalidArgument(fmt::format(
        "{}: service '{}' fits no profile: its best reachable latency is "
        "{:.6g} "
        "ms, over the limit of {:.6g} ms (latency_budget {} x SLO {} ms)",
        where(".latency_ms"), s.name, *best, limits.latency_limit_ms,
        workload.latency_budget, s.latency_ms));
  }
  return m;
}

void CapacityMatrix::Fill(const Workload& workload,
                          const profile::ProfileTable& profiles,
                          const Service& service, const mig::GpuModel& gpu,
                          int j) {
  for (int p = 0; p < num_profiles_; ++p) {
    // At fleet scale the searches take minutes: a signal stops them.
    if (!workload.mig.Enabled(gpu.profiles[p]) || Interrupted()) continue;
    Cell& cell = cells_[j * num_profiles_ + p];
    cell.measured =
        profiles.Measures(service.model, gpu.name, gpu.profiles[p].name);
    ReplicaCredit c = CreditOf(workload, service, profiles, gpu, p);
    if (c.rate <= 0) {
      cell.why_not = std::move(c.why_not);
      continue;
    }
    cell.row = std::move(c.row);
    cell.capacity = c.rate;
  }
}

std::string CapacityMatrix::FitsNone(int j, const mig::GpuModel& gpu) const {
  std::vector<std::string> why;
  for (int p = 0; p < num_profiles_; ++p) {
    if (throughput(j, p) > 0) return "";
    if (!why_not(j, p).empty()) {
      why.push_back(fmt::format("{}: {}", gpu.profiles[p].name, why_not(j, p)));
    }
  }
  return fmt::format("{}", fmt::join(why, "; "));
}

}  // namespace migserve::workload
