// For each service of a workload and each profile of its GPU, the best
// measured point the service may use there and what one instance of it
// serves under the workload's capacity model (DESIGN 3, docs/capacity.md;
// an LLM service's from its modelled slice, docs/llm.md), and the utility
// of that instance (paper 5.1: its throughput over the service's
// requirement).
#ifndef MIGSERVE_WORKLOAD_CAPACITY_MATRIX_H_
#define MIGSERVE_WORKLOAD_CAPACITY_MATRIX_H_

#include <optional>
#include <vector>

#include "mig/gpu_model.h"
#include "profile/profile_table.h"
#include "util/log_sink.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::workload {

class CapacityMatrix {
 public:
  // Returns the matrix of `workload` over the enabled profiles of `gpu`
  // (the workload's GPU, or one of its offers).
  // Returns InvalidArgument naming the workload file, line and field if a
  // service's model has no rows for the GPU, or if a service fits no
  // profile at all (with the best latency it could reach).
  // With `every_service_fits` false (one type of a mixed fleet), a service
  // that cannot run on `gpu` gets no capacity instead of an error.
  // With `progress`, says how far the credits are ("credits: 412 of 1000
  // services on A100-SXM4-80GB, about 9 s left") once they have taken
  // `progress_every_s`, and then every `progress_every_s`.
  static StatusOr<CapacityMatrix> Build(const Workload& workload,
                                        const profile::ProfileTable& profiles,
                                        const mig::GpuModel& gpu,
                                        bool every_service_fits = true,
                                        LogSink progress = {},
                                        double progress_every_s = 1);

  int num_services() const { return static_cast<int>(required_.size()); }
  int num_profiles() const { return num_profiles_; }

  // The best row of `service` on `profile`, or null if it cannot run there.
  const profile::ProfileRow* row(int service, int profile) const {
    const Cell& c = cells_[service * num_profiles_ + profile];
    return c.row ? &*c.row : nullptr;
  }
  // True if the profiles have a row of the service's model on `profile`
  // (it may still not run there: too slow for its SLO, or too big).
  bool measured(int service, int profile) const {
    return cells_[service * num_profiles_ + profile].measured;
  }
  // Why the service cannot run on `profile` (for an LLM's, docs/llm.md:
  // the slice cannot hold the model, or even an idle replica misses an
  // SLO); "" where it can.
  const std::string& why_not(int service, int profile) const {
    return cells_[service * num_profiles_ + profile].why_not;
  }
  // What one `profile` instance serves of `service` under the workload's
  // capacity model, req/s; 0 if it cannot run there.
  double throughput(int service, int profile) const {
    return cells_[service * num_profiles_ + profile].capacity;
  }
  // throughput / required throughput: the completion rate one instance adds.
  double utility(int service, int profile) const {
    return throughput(service, profile) / required_[service];
  }
  double required(int service) const { return required_[service]; }

  // This matrix with `required` as each service's required rate: the same
  // credits, utilities over the new rates (survive's spare capacity).
  // REQUIRES: required.size() == num_services().
  CapacityMatrix WithRequired(std::vector<double> required) const {
    CapacityMatrix m = *this;
    m.required_ = std::move(required);
    return m;
  }

 private:
  struct Cell {
    std::optional<profile::ProfileRow> row;
    double capacity = 0;
    bool measured = false;
    std::string why_not;  // where it cannot run
  };

  // Fills service `j`'s cells: on each enabled profile its credit
  // (workload/replica_credit.h), the row it runs with, or why it cannot run
  // there; nothing once interrupted.
  void Fill(const Workload& workload, const profile::ProfileTable& profiles,
            const Service& service, const mig::GpuModel& gpu, int j);
  // Why service `j` fits no profile of `gpu` ("PROFILE: why; ..."), or ""
  // where it fits one.
  std::string FitsNone(int j, const mig::GpuModel& gpu) const;

  CapacityMatrix(int num_profiles, std::vector<double> required)
      : num_profiles_(num_profiles),
        required_(std::move(required)),
        cells_(required_.size() * num_profiles) {}

  int num_profiles_;
  std::vector<double> required_;
  std::vector<Cell> cells_;
};

}  // namespace migserve::workload

#endif  // MIGSERVE_WORKLOAD_CAPACITY_MATRIX_H_
