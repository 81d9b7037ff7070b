#include "util/build_id.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace migserve {
namespace {

// The id is the one `readelf -n` prints for this test program.
TEST(BuildIdTest, IsTheProgramsGnuBuildIdNote) {
  std::string id = BuildId();
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  std::string self = std::filesystem::read_symlink("/proc/self/exe");
  std::unique_ptr<FILE, int (*)(FILE*)> readelf(
      popen(("readelf -n '" + self + "' 2>/dev/null").c_str(), "r"), pclose);
  ASSERT_NE(readelf, nullptr);
  std::string text;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, readelf.get())) {
    text.append(buffer, n);
  }
  if (text.find("Build ID") == std::string::npos) GTEST_SKIP() << "no readelf";
  EXPECT_NE(text.find("Build ID: " + id), std::string::npos) << text;
}

}  // namespace
}  // namespace migserve
