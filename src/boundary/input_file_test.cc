#include "boundary/input_file.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "util/test_util.h"

namespace migserve {
namespace {

TEST(InputFileTest, AFifoIsReadOnceAndItsTextKept) {
  const std::string path = testing::TempDir() + "/file-test.fifo";
  std::filesystem::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(path) << "gpu: A100-SXM4-80GB\n"; });
  EXPECT_EQ(ReadFile(path).value(), "gpu: A100-SXM4-80GB\n");
  writer.join();
  EXPECT_EQ(ReadFile(path).value(), "gpu: A100-SXM4-80GB\n");
  std::filesystem::remove(path);
}

TEST(InputFileTest, AnInputLargerThanTheLimitIsRefusedNotExhaustingMemory) {
  unsetenv("MIGSERVE_MAX_INPUT_MB");
  EXPECT_EQ(MaxInputBytes().value(), 256LL << 20);
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
  EXPECT_EQ(MaxInputBytes().value(), 1LL << 20);
  EXPECT_FALSE(ReadFile(sparse).ok());
  // A limit set wrong is refused by name, never ignored (issue 92).
  for (const char* bad : {"junk", "0", "-1", "1e3", "", " 5", "2000000",
                          "99999999999999999999"}) {
    setenv("MIGSERVE_MAX_INPUT_MB", bad, 1);
    StatusOr<std::string> read = ReadFile(sparse);
    ASSERT_FALSE(read.ok()) << bad;
    EXPECT_EQ(read.status().message(),
              fmt::format("MIGSERVE_MAX_INPUT_MB: '{}' is not a whole number "
                          "of MiB from 1 to 1048576 (unset it for the "
                          "default, 256)",
                          bad))
        << bad;
  }
  unsetenv("MIGSERVE_MAX_INPUT_MB");
  std::remove(sparse.c_str());
}

// A log's tail for a message: its last bytes only, whatever its size (a
// 2 GiB sparse log is not read whole).
TEST(InputFileTest, ATailIsReadWithoutTheRest) {
  std::string log = testing::TempDir() + "/tail.log";
  { std::ofstream(log) << "first\nsecond\nthird\n"; }
  EXPECT_EQ(ReadTail(log, 1000).value(), "first\nsecond\nthird\n");
  EXPECT_EQ(ReadTail(log, 6).value(), "third\n");
  ASSERT_EQ(truncate(log.c_str(), 2LL << 30), 0);
  { std::ofstream(log, std::ios::app) << "last line\n"; }
  EXPECT_EQ(ReadTail(log, 10).value(), "last line\n");
  std::remove(log.c_str());
  EXPECT_EQ(ReadTail(log, 10).status().code(), Status::Code::kNotFound);
}

// A line the kernel writes, or whatever stands at the path: its first
// bytes only (/dev/zero is endless).
TEST(InputFileTest, AHeadIsReadWithoutTheRest) {
  std::string file = testing::TempDir() + "/head.txt";
  { std::ofstream(file) << "first\nsecond\n"; }
  EXPECT_EQ(ReadHead(file, 1000).value(), "first\nsecond\n");
  EXPECT_EQ(ReadHead(file, 5).value(), "first");
  EXPECT_EQ(ReadHead("/dev/zero", 3).value(), std::string(3, '\0'));
  std::remove(file.c_str());
  EXPECT_EQ(ReadHead(file, 10).status().code(), Status::Code::kNotFound);
}

TEST(InputFileTest, MissingFileIsNotFoundNamingPath) {
  auto text = ReadFile("/nonexistent/dir/x.csv");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Status::Code::kNotFound);
  EXPECT_NE(text.status().message().find("/nonexistent/dir/x.csv"),
            std::string::npos);
}

}  // namespace
}  // namespace migserve
