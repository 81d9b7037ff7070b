// The profiles shipped in data/profiles/, for tests.
#ifndef MIGSERVE_PROFILE_TESTING_SHIPPED_H_
#define MIGSERVE_PROFILE_TESTING_SHIPPED_H_

#include <string>

#include "util/test_util.h"

namespace migserve::testing {

// The A100-SXM4-80GB measurements most tests plan with.
inline const std::string kA100Profiles =
    SourcePath("data/profiles/a100-80gb.csv");

}  // namespace migserve::testing

#endif  // MIGSERVE_PROFILE_TESTING_SHIPPED_H_
