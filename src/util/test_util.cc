#include "util/test_util.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "util/file.h"

namespace migserve::testing {
namespace {

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "migserve-test-XXXXXX")
            .string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

std::string SourcePath(const std::string& relative) {
  const char* dir = std::getenv("MIGSERVE_SOURCE_DIR");
  std::filesystem::path root = dir != nullptr ? dir : MIGSERVE_BUILT_FROM;
  return (root / relative).string();
}

std::string TempDir() {
  static ScratchDir dir;
  return dir.path();
}

std::string WriteTempFile(const std::string& name,
                          const std::string& contents) {
  std::string path = (std::filesystem::path(TempDir()) / name).string();
  Status s = WriteFileAtomic(path, contents);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return path;
}

std::pair<int, std::string> RunShell(const std::string& command) {
  FILE* pipe = popen(("(" + command + ") 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    out.append(buffer, n);
  }
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

int CountMatches(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                    std::sregex_iterator()));
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace migserve::testing
