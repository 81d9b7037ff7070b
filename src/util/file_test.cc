#include "util/file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/test_util.h"

namespace migserve {
namespace {

TEST(FileTest, AtomicWriteReplacesAndLeavesNoTempFile) {
  std::string dir = testing::TempDir() + "/a";
  std::filesystem::create_directory(dir);
  std::string path = dir + "/out.txt";
  ASSERT_TRUE(WriteFileAtomic(path, "one").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "two").ok());
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "two");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "out.txt") << "temp file left behind";
  }
}

// A typo in an output path is an error naming the missing directory; no
// directory is created.
TEST(FileTest, MissingDirectoryIsAnErrorNotCreated) {
  std::string missing = testing::TempDir() + "/no/such";
  Status s = WriteFileAtomic(missing + "/x.json", "{}");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("no directory " + missing), std::string::npos)
      << s.message();
  EXPECT_FALSE(std::filesystem::exists(testing::TempDir() + "/no"));
}

TEST(FileTest, MissingFileIsNotFoundNamingPath) {
  auto text = ReadFile("/nonexistent/dir/x.csv");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Status::Code::kNotFound);
  EXPECT_NE(text.status().message().find("/nonexistent/dir/x.csv"),
            std::string::npos);
}

TEST(SourcePathTest, FindsTheTreeWithoutTheEnvironment) {
  // As when a test binary is run by hand, not by ctest.
  unsetenv("MIGSERVE_SOURCE_DIR");
  EXPECT_TRUE(std::filesystem::exists(
      testing::SourcePath("data/deployments/day.json")));
}

}  // namespace
}  // namespace migserve
