#include "boundary/input_file.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "boundary/plain_name.h"
#include "util/mutex.h"

namespace migserve {
namespace {

// What ReadFile remembers: the texts of inputs read once (standard input,
// pipes), and the device and inode of every regular file read (WasRead).
Mutex& ReadMutex() {
  static Mutex* const mu = new Mutex;
  return *mu;
}
std::map<std::string, std::string>& KeptTexts() {
  static auto* const kept = new std::map<std::string, std::string>;
  return *kept;
}
std::set<std::pair<dev_t, ino_t>>& ReadIds() {
  static auto* const ids = new std::set<std::pair<dev_t, ino_t>>;
  return *ids;
}

// What an input over the limit is told.
Status TooLarge(const std::string& path, long long limit) {
  return Status::InvalidArgument(fmt::format(
      "{}: larger than {} MiB, the most migserve reads of one input "
      "(MIGSERVE_MAX_INPUT_MB raises it)",
      path == "-" ? std::string("standard input") : path, limit >> 20));
}

// The text of `in` (read from `path`), to its end, or TooLarge once it
// passes `limit` bytes: /dev/zero, an endless pipe or a huge sparse file
// ends in an error, not in exhausted memory.
StatusOr<std::string> ReadBounded(std::istream& in, const std::string& path,
                                  long long limit) {
  std::string text;
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof chunk);
    std::streamsize got = in.gcount();
    if (static_cast<long long>(text.size()) + got > limit) {
      return TooLarge(path, limit);
    }
    text.append(chunk, static_cast<size_t>(got));
  }
  if (in.bad()) return Status::Unavailable(path + ": read failed");
  return text;
}

// The text of `path` ("-": standard input), read to its end, at most
// `limit` bytes.
StatusOr<std::string> ReadAll(const std::string& path, long long limit) {
  if (path == "-") return ReadBounded(std::cin, path, limit);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(path + ": cannot open: " + std::strerror(errno));
  }
  return ReadBounded(in, path, limit);
}

}  // namespace

StatusOr<long long> MaxInputBytes() {
  constexpr long long kDefaultMb = 256;
  constexpr long long kMostMb = 1 << 20;
  const char* set = std::getenv("MIGSERVE_MAX_INPUT_MB");
  if (set == nullptr) return kDefaultMb << 20;
  const std::string text = set;
  char* end = nullptr;
  errno = 0;
  long long mb = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) ||
      *end != '\0' || errno != 0 || mb < 1 || mb > kMostMb) {
    return Status::InvalidArgument(fmt::format(
        "MIGSERVE_MAX_INPUT_MB: '{}' is not a whole number of MiB from 1 to "
        "{} (unset it for the default, {})",
        Printable(text.substr(0, 40)), kMostMb, kDefaultMb));
  }
  return mb << 20;
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (path != "-" && std::filesystem::is_directory(status)) {
    return Status::InvalidArgument(path + ": is a directory, not a file");
  }
  // A regular file says its size: one too large is refused unread.
  MIGSERVE_ASSIGN_OR_RETURN(const long long limit, MaxInputBytes());
  if (path != "-" && std::filesystem::is_regular_file(status)) {
    std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > static_cast<std::uintmax_t>(limit)) {
      return TooLarge(path, limit);
    }
  }
  // Standard input or a pipe (a FIFO, `-w <(...)`) gives its text once, and
  // a second open of a FIFO waits for a writer that is gone: it is read
  // once, under the lock, and its text kept for the calls after (a command
  // may load its input more than once).
  const bool once = path == "-" || (std::filesystem::exists(status) &&
                                    !std::filesystem::is_regular_file(status));
  if (once) {
    MutexLock lock(&ReadMutex());
    std::map<std::string, std::string>& kept = KeptTexts();
    if (auto it = kept.find(path); it != kept.end()) return it->second;
    MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadAll(path, limit));
    return kept.emplace(path, std::move(text)).first->second;
  }
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadAll(path, limit));
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    MutexLock lock(&ReadMutex());
    ReadIds().emplace(st.st_dev, st.st_ino);
  }
  return text;
}

StatusOr<std::string> ReadTail(const std::string& path, long long max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    return Status::NotFound(path + ": cannot open: " + std::strerror(errno));
  }
  const long long size = static_cast<long long>(in.tellg());
  const long long from = size > max_bytes ? size - max_bytes : 0;
  in.seekg(from);
  return ReadBounded(in, path, max_bytes);
}

StatusOr<std::string> ReadHead(const std::string& path, long long max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(path + ": cannot open: " + std::strerror(errno));
  }
  std::string text(static_cast<size_t>(std::max(0LL, max_bytes)), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Status::Unavailable(path + ": read failed");
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

bool WasRead(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  MutexLock lock(&ReadMutex());
  return ReadIds().contains({st.st_dev, st.st_ino});
}

void ForgetReads() {
  MutexLock lock(&ReadMutex());
  ReadIds().clear();
}

}  // namespace migserve
