// A pod ledger in memory, for tests of the Kubernetes backend (the
// controller keeps its ledger in the journal: manager/journal_pod_ledger.h).
#ifndef MIGSERVE_KUBERNETES_TESTING_MEMORY_POD_LEDGER_H_
#define MIGSERVE_KUBERNETES_TESTING_MEMORY_POD_LEDGER_H_

#include "kubernetes/cluster_model.h"
#include "kubernetes/pod_ledger.h"

namespace migserve::kubernetes {

class MemoryPodLedger : public PodLedger {
 public:
  StatusOr<std::map<std::string, LedgerEntry>> Entries() override {
    return entries;
  }
  Status Put(const std::string& name, const LedgerEntry& entry) override {
    entries[name] = entry;
    return Status::Ok();
  }
  Status Erase(const std::string& name) override {
    entries.erase(name);
    return Status::Ok();
  }

  std::map<std::string, LedgerEntry> entries;
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_TESTING_MEMORY_POD_LEDGER_H_
