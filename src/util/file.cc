#include "util/file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace migserve {

Status CheckOutputDirectory(const std::string& path) {
  if (path.empty() || path == "-") return Status::Ok();
  std::filesystem::path target(path);
  std::error_code ec;
  if (target.has_parent_path() &&
      !std::filesystem::is_directory(target.parent_path(), ec)) {
    return Status::InvalidArgument(path + ": no directory " +
                                   target.parent_path().string());
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  return WriteFilesAtomic({{path, contents}});
}

namespace {

// Writes all of `contents` to `fd` and closes it; false with errno set on
// the first failed write (a full disk: ENOSPC; a closed pipe: EPIPE), on
// `sync`'s fsync or on close.
bool WriteAndClose(int fd, const std::string& contents, bool sync) {
  size_t done = 0;
  bool ok = true;
  while (ok && done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      ok = false;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (ok && sync && ::fsync(fd) != 0) ok = false;
  int saved = errno;
  if (::close(fd) != 0 && ok) return false;
  errno = saved;
  return ok;
}

// Whether `path` exists as something other than a regular file or a
// directory: a device (/dev/stdout, /dev/null), a FIFO, a socket. Such an
// output is written in place: renaming a file over it would replace the
// device itself (as root, /dev/null).
bool IsSpecial(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
         !S_ISDIR(st.st_mode);
}

}  // namespace

Status WriteFilesAtomic(
    const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [path, contents] : files) {
    MIGSERVE_RETURN_IF_ERROR(CheckOutputDirectory(path));
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      return Status::InvalidArgument(path + ": is a directory");
    }
  }
  std::error_code ec;
  std::vector<std::string> written;  // temporaries, per file ("" special)
  auto discard = [&] {
    for (const std::string& tmp : written) {
      if (!tmp.empty()) std::filesystem::remove(tmp, ec);
    }
  };
  for (const auto& [path, contents] : files) {
    if (IsSpecial(path)) {
      int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || !WriteAndClose(fd, contents, false)) {
        std::string reason = std::strerror(errno);
        discard();
        return Status::Unavailable(path + ": cannot write: " + reason);
      }
      written.push_back("");
      continue;
    }
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    int fd =
        ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      std::string reason = std::strerror(errno);
      discard();
      return Status::Unavailable(path + ": cannot write: " + reason);
    }
    written.push_back(tmp);
    // Written, synced and closed before any rename: a full disk or a
    // failed close leaves the old file as it was.
    if (!WriteAndClose(fd, contents, true)) {
      std::string reason = std::strerror(errno);
      discard();
      return Status::Unavailable(path + ": write failed: " + reason);
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (written[i].empty()) continue;  // written in place
    // A file written again keeps its mode (a 0600 output stays private).
    std::filesystem::file_status old =
        std::filesystem::status(files[i].first, ec);
    if (std::filesystem::is_regular_file(old)) {
      std::filesystem::permissions(written[i], old.permissions(),
                                   std::filesystem::perm_options::replace, ec);
    }
    if (std::rename(written[i].c_str(), files[i].first.c_str()) != 0) {
      std::string reason = std::strerror(errno);
      written.erase(written.begin(), written.begin() + i);
      discard();
      return Status::Unavailable(files[i].first +
                                 ": cannot rename into place: " + reason);
    }
  }
  return Status::Ok();
}

}  // namespace migserve
