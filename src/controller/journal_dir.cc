#include "controller/journal_dir.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

namespace migserve::controller {
namespace {

namespace fs = std::filesystem;

// When the journal at `path` was last written: its WAL's time where it
// has one (commits go there until a checkpoint).
fs::file_time_type LastWritten(const std::string& path) {
  std::error_code error;
  fs::file_time_type written = fs::last_write_time(path, error);
  fs::file_time_type wal = fs::last_write_time(path + "-wal", error);
  return error ? written : std::max(written, wal);
}

struct Candidate {
  std::string path;
  long epoch = -1;
  fs::file_time_type written;
};

// Every journal in `dir` but `own`, each with its fence; the newest last.
StatusOr<std::vector<Candidate>> Others(const std::string& dir,
                                        const std::string& own) {
  std::vector<Candidate> others;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string path = entry.path().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".db" ||
        path == own) {
      continue;
    }
    StatusOr<std::unique_ptr<Journal>> journal = Journal::OpenReadOnly(path);
    StatusOr<long> epoch = journal.ok() ? (*journal)->FencedEpoch()
                                        : StatusOr<long>(journal.status());
    if (!epoch.ok()) {
      return Status::FailedPrecondition(fmt::format(
          "journal directory {}: {} cannot be read ({}); move it away to "
          "adopt the plan of the others, or all of them to start over",
          dir, path, epoch.status().message()));
    }
    others.push_back({path, *epoch, LastWritten(path)});
  }
  if (error) {
    return Status::Unavailable(fmt::format(
        "journal directory {}: cannot list it: {}", dir, error.message()));
  }
  std::sort(others.begin(), others.end(),
            [](const Candidate& a, const Candidate& b) {
              return std::tie(a.epoch, a.written, a.path) <
                     std::tie(b.epoch, b.written, b.path);
            });
  return others;
}

}  // namespace

std::string JournalFileIn(const std::string& dir, const std::string& name) {
  std::string file;
  for (char c : name) {
    bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                 c == '_' || c == '-';
    file += plain ? c : '_';
  }
  return (fs::path(dir) / (file + ".db")).string();
}

StatusOr<JournalInDir> OpenJournalIn(const std::string& dir,
                                     const std::string& name) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return Status::Unavailable(fmt::format(
        "journal directory {}: cannot create it: {}", dir, error.message()));
  }
  JournalInDir opened;
  opened.path = JournalFileIn(dir, name);
  if (!fs::exists(opened.path)) {
    MIGSERVE_ASSIGN_OR_RETURN(std::vector<Candidate> others,
                              Others(dir, opened.path));
    if (!others.empty()) {
      const Candidate& newest = others.back();
      MIGSERVE_RETURN_IF_ERROR(Journal::Snapshot(newest.path, opened.path));
      opened.adopted = newest.path;
      opened.adopted_epoch = newest.epoch;
      for (const Candidate& other : others) {
        for (const char* suffix : {"", "-wal", "-shm"}) {
          fs::remove(other.path + suffix, error);
        }
        opened.removed.push_back(other.path);
      }
    }
  }
  MIGSERVE_ASSIGN_OR_RETURN(opened.journal, Journal::Open(opened.path));
  return opened;
}

StatusOr<std::string> JournalToReadIn(const std::string& dir,
                                      const std::string& name) {
  const std::string own = JournalFileIn(dir, name);
  if (fs::exists(own)) return own;
  if (!fs::is_directory(dir)) {
    return Status::NotFound("no journal directory " + dir);
  }
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<Candidate> others, Others(dir, own));
  if (others.empty()) return Status::NotFound("no journal in " + dir);
  return others.back().path;
}

}  // namespace migserve::controller
