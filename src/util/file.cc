#include "util/file.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

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

Status WriteFilesAtomic(
    const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [path, contents] : files) {
    MIGSERVE_RETURN_IF_ERROR(CheckOutputDirectory(path));
  }
  std::error_code ec;
  std::vector<std::string> written;
  auto discard = [&] {
    for (const std::string& tmp : written) std::filesystem::remove(tmp, ec);
  };
  for (const auto& [path, contents] : files) {
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      std::string reason = std::strerror(errno);
      discard();
      return Status::Unavailable(path + ": cannot write: " + reason);
    }
    written.push_back(tmp);
    out << contents;
    out.flush();
    if (!out) {
      discard();
      return Status::Unavailable(path + ": write failed");
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
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
