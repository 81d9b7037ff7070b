// The profile tables migserve ships (data/profiles/, docs/formats.md):
// measurements every command has, `-p` or not, so that a deployment's
// declared credits can be checked against them wherever they measured the
// point (deployment/validator.h, CheckModelledCredits).
#ifndef MIGSERVE_PROFILE_SHIPPED_PROFILES_H_
#define MIGSERVE_PROFILE_SHIPPED_PROFILES_H_

#include <vector>

#include "profile/profile_table.h"

namespace migserve::profile {

// data/profiles/a100-80gb.csv and data/profiles/migperf.csv as built in,
// each with its file as its source; parsed on first use.
const std::vector<ProfileTable>& ShippedProfiles();

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_SHIPPED_PROFILES_H_
