#include "profile/shipped_profiles.h"

#include <gtest/gtest.h>

#include "profile/profile_csv.h"
#include "util/test_util.h"

namespace migserve::profile {
namespace {

// What is built in is the shipped files, row for row.
TEST(ShippedProfilesTest, AreTheShippedFiles) {
  const std::vector<ProfileTable>& shipped = ShippedProfiles();
  ASSERT_EQ(shipped.size(), 2u);
  const char* files[] = {"data/profiles/a100-80gb.csv",
                         "data/profiles/migperf.csv"};
  for (size_t i = 0; i < shipped.size(); ++i) {
    ProfileTable file = LoadProfileCsv(testing::SourcePath(files[i])).value();
    EXPECT_GT(file.rows.size(), 100u) << files[i];
    EXPECT_EQ(FormatProfileCsv(shipped[i]), FormatProfileCsv(file)) << files[i];
    EXPECT_EQ(shipped[i].source, files[i]);
  }
}

}  // namespace
}  // namespace migserve::profile
