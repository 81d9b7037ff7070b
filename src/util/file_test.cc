#include "util/file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/test_util.h"

namespace migserve {
namespace {

// What a write left at `path` (reads from outside are boundary/'s; this is
// a test's look at its own file).
std::string Contents(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

TEST(FileTest, AtomicWriteReplacesAndLeavesNoTempFile) {
  std::string dir = testing::TempDir() + "/a";
  std::filesystem::create_directory(dir);
  std::string path = dir + "/out.txt";
  ASSERT_TRUE(WriteFileAtomic(path, "one").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "two").ok());
  EXPECT_EQ(Contents(path), "two");
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
  EXPECT_EQ(Contents(dir + "/a.yaml"), "old a");
  EXPECT_EQ(Contents(dir + "/b.yaml"), "old b");
  std::filesystem::remove(blocked);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            2);
  ASSERT_TRUE(
      WriteFilesAtomic({{dir + "/a.yaml", "new a"}, {dir + "/b.yaml", "new b"}})
          .ok());
  EXPECT_EQ(Contents(dir + "/a.yaml"), "new a");
  EXPECT_EQ(Contents(dir + "/b.yaml"), "new b");
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

TEST(FileTest, AFileWrittenAgainKeepsItsMode) {
  const std::string path = testing::TempDir() + "/file-test-private.json";
  ASSERT_TRUE(WriteFileAtomic(path, "{}").ok());
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write);
  ASSERT_TRUE(WriteFileAtomic(path, "{\"a\": 1}").ok());
  EXPECT_EQ(
      std::filesystem::status(path).permissions(),
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(Contents(path), "{\"a\": 1}");
}

// An output that is a FIFO or a device is written in place, never renamed
// over (issue 92: as root, `-o /dev/full` replaced the device with a
// regular file and said nothing); a full disk is an error, and so is a
// directory.
TEST(FileTest, ADeviceOrFifoIsWrittenInPlaceAndAFullOneFails) {
  const std::string fifo = testing::TempDir() + "/file-test.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = Contents(fifo); });
  EXPECT_TRUE(WriteFileAtomic(fifo, "through the pipe").ok());
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  struct stat st;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  ASSERT_TRUE(S_ISFIFO(st.st_mode));  // still the FIFO: /dev/full is safe
  ASSERT_EQ(stat("/dev/full", &st), 0);
  ASSERT_TRUE(S_ISCHR(st.st_mode));
  Status full = WriteFileAtomic("/dev/full", "{}");
  EXPECT_EQ(full.message(), "/dev/full: cannot write: No space left on device");
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(WriteFileAtomic(testing::TempDir(), "{}").message(),
            testing::TempDir() + ": is a directory");
}

// Inputs read whole are bounded (issue 76: /dev/zero and a 2 GB sparse

// file ended in std::bad_alloc): a device or pipe once the limit has come,

// a regular file by its size, unread; the limit is a setting.

TEST(SourcePathTest, FindsTheTreeWithoutTheEnvironment) {
  // As when a test binary is run by hand, not by ctest.
  unsetenv("MIGSERVE_SOURCE_DIR");
  EXPECT_TRUE(std::filesystem::exists(
      testing::SourcePath("data/deployments/day.json")));
}

}  // namespace
}  // namespace migserve
