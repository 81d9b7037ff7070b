#include "util/file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/test_util.h"

namespace migserve {
namespace {

TEST(FileTest, AtomicWriteCreatesParentsAndReplaces) {
  std::string path = testing::TempDir() + "/a/b/out.txt";
  ASSERT_TRUE(WriteFileAtomic(path, "one").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "two").ok());
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "two");
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::TempDir() + "/a/b")) {
    EXPECT_EQ(entry.path().filename(), "out.txt") << "temp file left behind";
  }
}

TEST(FileTest, MissingFileIsNotFoundNamingPath) {
  auto text = ReadFile("/nonexistent/dir/x.csv");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Status::Code::kNotFound);
  EXPECT_NE(text.status().message().find("/nonexistent/dir/x.csv"),
            std::string::npos);
}

}  // namespace
}  // namespace migserve
