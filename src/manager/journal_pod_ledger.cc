#include "manager/journal_pod_ledger.h"

namespace migserve::manager {

StatusOr<std::map<std::string, kubernetes::LedgerEntry>>
JournalPodLedger::Entries() {
  MIGSERVE_ASSIGN_OR_RETURN(auto pods, journal_->Pods());
  std::map<std::string, kubernetes::LedgerEntry> entries;
  for (const auto& [name, pod] : pods) entries[name] = {pod.token, pod.uid};
  return entries;
}

Status JournalPodLedger::Put(const std::string& name,
                             const kubernetes::LedgerEntry& entry) {
  return journal_->PutPod(name, {entry.token, entry.uid});
}

Status JournalPodLedger::Erase(const std::string& name) {
  return journal_->ErasePod(name);
}

}  // namespace migserve::manager
