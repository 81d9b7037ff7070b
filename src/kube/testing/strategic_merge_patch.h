// Strategic merge patch (application/strategic-merge-patch+json), as the
// API server applies it to a built-in kind (apimachinery's strategicpatch,
// docs: "Update API Objects in Place Using kubectl patch"): what `kubectl
// apply` sends to change an object it applied before. Maps merge key by
// key, null deleting one; a list whose field has a merge key (containers
// by name, a container's ports by containerPort, env by name, ...) merges
// item by item, an item `{"$patch": "delete", key: ...}` removing one; a
// list of finalizers is a set; every other list is replaced whole. The
// directives kubectl writes are honoured: `$setElementOrder/<field>`
// (the order of the merged list), `$retainKeys` (the keys a map keeps),
// `$deleteFromPrimitiveList/<field>` and `$patch: replace | delete` on a
// map. The merge keys are those of the kinds the stand-in serves (pods and
// their templates, Services, object metadata, conditions), by field name,
// not the full schema of every kind.
#ifndef MIGSERVE_KUBE_TESTING_STRATEGIC_MERGE_PATCH_H_
#define MIGSERVE_KUBE_TESTING_STRATEGIC_MERGE_PATCH_H_

#include <nlohmann/json.hpp>

#include "util/status_or.h"

namespace migserve::kube {

// `original` with `patch` applied; InvalidArgument where the patch is not
// one (a directive of the wrong shape, an item of a merged list without
// its key).
StatusOr<nlohmann::json> StrategicMergePatch(const nlohmann::json& original,
                                             const nlohmann::json& patch);

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_TESTING_STRATEGIC_MERGE_PATCH_H_
