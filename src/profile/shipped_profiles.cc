#include "profile/shipped_profiles.h"

#include "profile/embedded_profiles.h"
#include "profile/profile_csv.h"

namespace migserve::profile {
namespace {

// A build whose shipped file does not parse fails its first test
// (ShippedProfilesTest).
ProfileTable Parse(const char* text, const char* source) {
  StatusOr<ProfileTable> table = ParseProfileCsv(text, source);
  return table.ok() ? std::move(*table) : ProfileTable();
}

}  // namespace

const std::vector<ProfileTable>& ShippedProfiles() {
  static const std::vector<ProfileTable>* tables =
      new std::vector<ProfileTable>{
          Parse(kEmbeddedA100Profiles, "data/profiles/a100-80gb.csv"),
          Parse(kEmbeddedMigperfProfiles, "data/profiles/migperf.csv")};
  return *tables;
}

}  // namespace migserve::profile
