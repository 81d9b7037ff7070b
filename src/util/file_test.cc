#include "util/file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

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
// Several files are written as one: when one of them cannot be written
// (here its temporary name is taken by a directory), none is replaced and
// no temporary is left.
TEST(FileTest, SeveralFilesAllOrNone) {
  std::string dir = testing::TempDir() + "/all-or-none";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteFileAtomic(dir + "/a.yaml", "old a").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/b.yaml", "old b").ok());
  std::string blocked = dir + "/b.yaml.tmp." + std::to_string(::getpid());
  std::filesystem::create_directories(blocked);
  Status s = WriteFilesAtomic(
      {{dir + "/a.yaml", "new a"}, {dir + "/b.yaml", "new b"}});
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(ReadFile(dir + "/a.yaml").value(), "old a");
  EXPECT_EQ(ReadFile(dir + "/b.yaml").value(), "old b");
  std::filesystem::remove(blocked);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            2);
  ASSERT_TRUE(
      WriteFilesAtomic({{dir + "/a.yaml", "new a"}, {dir + "/b.yaml", "new b"}})
          .ok());
  EXPECT_EQ(ReadFile(dir + "/a.yaml").value(), "new a");
  EXPECT_EQ(ReadFile(dir + "/b.yaml").value(), "new b");
}

TEST(FileTest, MissingDirectoryIsAnErrorNotCreated) {
  std::string missing = testing::TempDir() + "/no/such";
  Status s = WriteFileAtomic(missing + "/x.json", "{}");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("no directory " + missing), std::string::npos)
      << s.message();
  EXPECT_FALSE(std::filesystem::exists(testing::TempDir() + "/no"));
}

// A FIFO gives its text once; the second read of it (a command loads its
// workload twice) gets the same text instead of waiting for a writer.
TEST(FileTest, AFifoIsReadOnceAndItsTextKept) {
  const std::string path = testing::TempDir() + "/file-test.fifo";
  std::filesystem::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(path) << "gpu: A100-SXM4-80GB\n"; });
  EXPECT_EQ(ReadFile(path).value(), "gpu: A100-SXM4-80GB\n");
  writer.join();
  EXPECT_EQ(ReadFile(path).value(), "gpu: A100-SXM4-80GB\n");
  std::filesystem::remove(path);
}

TEST(FileTest, AFileWrittenAgainKeepsItsMode) {
  const std::string path = testing::TempDir() + "/file-test-private.json";
  ASSERT_TRUE(WriteFileAtomic(path, "{}").ok());
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write);
  ASSERT_TRUE(WriteFileAtomic(path, "{\"a\": 1}").ok());
  EXPECT_EQ(
      std::filesystem::status(path).permissions(),
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(ReadFile(path).value(), "{\"a\": 1}");
}

// Inputs read whole are bounded (issue 76: /dev/zero and a 2 GB sparse
// file ended in std::bad_alloc): a device or pipe once the limit has come,
// a regular file by its size, unread; the limit is a setting.
TEST(FileTest, AnInputLargerThanTheLimitIsRefusedNotExhaustingMemory) {
  unsetenv("MIGSERVE_MAX_INPUT_MB");
  EXPECT_EQ(MaxInputBytes(), 256LL << 20);
  StatusOr<std::string> zero = ReadFile("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(zero.status().message(),
            "/dev/zero: larger than 256 MiB, the most migserve reads of one "
            "input (MIGSERVE_MAX_INPUT_MB raises it)");
  std::string sparse = testing::TempDir() + "/sparse.csv";
  { std::ofstream(sparse) << "x"; }
  ASSERT_EQ(truncate(sparse.c_str(), 2LL << 30), 0);  // 2 GiB of holes
  StatusOr<std::string> huge = ReadFile(sparse);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("larger than 256 MiB"),
            std::string::npos);
  ASSERT_EQ(truncate(sparse.c_str(), 2 << 20), 0);  // 2 MiB
  EXPECT_EQ(ReadFile(sparse)->size(), 2u << 20);
  setenv("MIGSERVE_MAX_INPUT_MB", "1", 1);
  EXPECT_EQ(MaxInputBytes(), 1LL << 20);
  EXPECT_FALSE(ReadFile(sparse).ok());
  setenv("MIGSERVE_MAX_INPUT_MB", "junk", 1);  // ignored: the default
  EXPECT_EQ(MaxInputBytes(), 256LL << 20);
  unsetenv("MIGSERVE_MAX_INPUT_MB");
  std::remove(sparse.c_str());
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
