// The replica pods a controller made (docs/kubernetes.md, "Ownership"). A
// pod's labels and annotations are whatever its creator wrote, so anyone who
// may create pods can copy a replica's; its uid is assigned by the API server
// when the pod is created, and no client can choose it. The controller
// records, for each pod name, the uid the API server gave the pod it
// created, and counts, deletes or takes over only a pod whose uid is the
// recorded one.
//
// Before a create it records the name with a fresh random token, written
// into the pod as kAnnotationCreation: a controller that died between the
// create and recording its uid finds the pod again by its token, which no
// one could have copied (it existed only in the ledger until the pod did).
#ifndef MIGSERVE_KUBERNETES_POD_LEDGER_H_
#define MIGSERVE_KUBERNETES_POD_LEDGER_H_

#include <map>
#include <string>

#include "kubernetes/cluster_model.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

struct LedgerEntry {
  std::string token;  // kAnnotationCreation of the pod; "" if adopted
  std::string uid;    // "" until the API server has answered the create
  bool operator==(const LedgerEntry&) const = default;
};

// Where the ledger is kept: the controller's journal (manager/), or memory.
class PodLedger {
 public:
  virtual ~PodLedger() = default;
  // Every entry, by pod name.
  virtual StatusOr<std::map<std::string, LedgerEntry>> Entries() = 0;
  // Records (or replaces) the entry of pod `name`, durably.
  virtual Status Put(const std::string& name, const LedgerEntry& entry) = 0;
  // Forgets pod `name`.
  virtual Status Erase(const std::string& name) = 0;
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_POD_LEDGER_H_
