#include "workload/workload.h"

namespace migserve::workload {

int Workload::FindService(const std::string& name) const {
  for (size_t i = 0; i < services.size(); ++i) {
    if (services[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace migserve::workload
