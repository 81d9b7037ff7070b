// One line of a preflight (`migserve doctor`): a check that passed, or a
// problem with what to do about it.
#ifndef MIGSERVE_KUBERNETES_PARTITION_FINDING_H_
#define MIGSERVE_KUBERNETES_PARTITION_FINDING_H_

#include <string>

namespace migserve::kubernetes {

struct Finding {
  bool problem = false;  // false: a check that passed
  std::string text;      // what was seen, and for a problem what to do
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_FINDING_H_
