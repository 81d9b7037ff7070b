// Partial reconfiguration (paper 3.3): destroy some instances of one GPU and
// create others, leaving every other instance untouched.
#ifndef MIGSERVE_MIG_RECONFIGURATION_H_
#define MIGSERVE_MIG_RECONFIGURATION_H_

#include <string>
#include <vector>

#include "mig/gpu_model.h"
#include "mig/layout.h"

namespace migserve::mig {

struct Reconfiguration {
  std::vector<Instance> remove;  // mset: instances destroyed
  std::vector<Instance> add;     // mset': instances created
};

// Returns true if applying `change` to `before` is legal: every removed
// instance exists in `before`, `before` is legal, and the layout after
// (before minus remove plus add) is legal, so that the instances outside the
// changed set stay as they are. Otherwise returns false and sets `why` (if not
// null) to the reason. On success sets `after` (if not null).
bool IsLegalReconfiguration(const GpuModel& model, const MigOptions& options,
                            const Layout& before, const Reconfiguration& change,
                            Layout* after, std::string* why = nullptr);

// Returns the smallest change from `before` to `after`: the instances only in
// `before` are removed and those only in `after` are added.
Reconfiguration Diff(const Layout& before, const Layout& after);

}  // namespace migserve::mig

#endif  // MIGSERVE_MIG_RECONFIGURATION_H_
