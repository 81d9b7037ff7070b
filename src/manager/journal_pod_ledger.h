// The Kubernetes backend's pod ledger (kubernetes/pod_ledger.h)
// kept in the controller's journal, so that it survives the controller as
// its plan does.
#ifndef MIGSERVE_MANAGER_JOURNAL_POD_LEDGER_H_
#define MIGSERVE_MANAGER_JOURNAL_POD_LEDGER_H_

#include "controller/journal.h"
#include "kubernetes/pod_ledger.h"

namespace migserve::manager {

class JournalPodLedger : public kubernetes::PodLedger {
 public:
  // `journal` is not owned and outlives the ledger.
  explicit JournalPodLedger(controller::Journal* journal) : journal_(journal) {}

  StatusOr<std::map<std::string, kubernetes::LedgerEntry>> Entries() override;
  Status Put(const std::string& name,
             const kubernetes::LedgerEntry& entry) override;
  Status Erase(const std::string& name) override;

 private:
  controller::Journal* journal_;
};

}  // namespace migserve::manager

#endif  // MIGSERVE_MANAGER_JOURNAL_POD_LEDGER_H_
