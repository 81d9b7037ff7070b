// Claims that reach the plan (docs/kubernetes.md, "Claims that land on the
// plan"): the order in which to create a node's ResourceClaims so that
// first-fit allocation (first_fit.h) puts every planned instance exactly at its
// planned start. The driver exposes no placement attribute a selector could
// pin, and first-fit gives a profile its lowest free start on the GPU; so
// a GPU's instances are claimed in order of start, and where a lower start
// of the profile is still free a holding claim (a pause pod's claim, the
// smallest device that lands below the planned one without touching it)
// takes it first. The holds are released once the GPU's instances are all
// allocated: the planned instances stay where they landed.
#ifndef MIGSERVE_DRA_CLAIM_ORDER_H_
#define MIGSERVE_DRA_CLAIM_ORDER_H_

#include <vector>

#include "dra/first_fit.h"
#include "mig/gpu_model.h"
#include "mig/layout.h"
#include "util/status_or.h"

namespace migserve::dra {

struct ClaimStep {
  enum class Kind {
    kClaim,    // the claim of a planned instance (its replica's)
    kHold,     // a holding claim, created
    kRelease,  // a holding claim, deleted
  };
  Kind kind = Kind::kClaim;
  // The claim pins the profile and the GPU; first-fit gives it this start.
  Allocation at;
  bool operator==(const ClaimStep&) const = default;
};

// Returns the steps that add `add` to GPU `gpu` of `node`, and takes them on
// `node` (so a caller can plan GPU after GPU, or step after step of a
// transition). InvalidArgument naming the instance if `add` does not fit
// beside what the GPU holds; Internal if no holding claim can clear the way
// (no shipped GPU table has such a layout: tests try them all).
StatusOr<std::vector<ClaimStep>> ClaimInstances(
    FirstFitNode* node, int gpu, const std::vector<mig::Instance>& add);

// The steps that give every GPU of an empty node its planned layout
// (`layouts[i]` for GPU minor i), GPU after GPU.
StatusOr<std::vector<ClaimStep>> ClaimLayouts(
    const mig::GpuModel& model, const std::vector<mig::Layout>& layouts);

}  // namespace migserve::dra

#endif  // MIGSERVE_DRA_CLAIM_ORDER_H_
