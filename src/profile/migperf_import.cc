#include "profile/migperf_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "boundary/csv_file.h"
#include "boundary/input_file.h"
#include "mig/gpu_catalog.h"

namespace migserve::profile {
namespace {

// MIGPerf's directory names for the GPUs it measured.
const std::map<std::string, std::string>& GpuOfDirectory() {
  static const auto* m = new std::map<std::string, std::string>{
      {"A100-80g", "A100-SXM4-80GB"}, {"A100-40g", "A100-SXM4-40GB"}};
  return *m;
}

// The A100-40GB files name instances by memory; MIGPerf used one profile
// per size.
const std::map<int, std::string>& ProfileOfMemory() {
  static const auto* m = new std::map<int, std::string>{
      {5, "1g.5gb"}, {10, "2g.10gb"}, {20, "3g.20gb"}, {40, "7g.40gb"}};
  return *m;
}

double Round3(double x) { return std::round(x * 1e3) / 1e3; }

}  // namespace

Status ImportMigPerfCsv(std::string_view text, const std::string& path,
                        const std::string& gpu_name, ImportedProfiles* out) {
  MIGSERVE_ASSIGN_OR_RETURN(const mig::GpuModel* gpu,
                            mig::GpuCatalog::Default().Find(gpu_name));
  MIGSERVE_ASSIGN_OR_RETURN(CsvFile file, CsvFile::Parse(text, path));
  MIGSERVE_ASSIGN_OR_RETURN(int model_col, file.Require("model_name"));
  MIGSERVE_ASSIGN_OR_RETURN(int batch_col, file.Require("batch_size"));
  MIGSERVE_ASSIGN_OR_RETURN(int latency_col, file.Require("latency"));
  MIGSERVE_ASSIGN_OR_RETURN(int throughput_col, file.Require("throughput"));
  int profile_col = file.Find("mig_profile");
  int memory_col = file.Find("instance_memory");
  int fb_col = file.Find("fb_used_mean");
  if (profile_col < 0 && memory_col < 0) {
    MIGSERVE_RETURN_IF_ERROR(file.Require("mig_profile").status());
  }
  int recomputed = 0, rows = 0;
  for (const CsvRecord& r : file.Rows()) {
    ProfileRow row;
    MIGSERVE_ASSIGN_OR_RETURN(row.model, file.PlainName(r, model_col));
    row.gpu = gpu->name;
    if (profile_col >= 0) {
      auto profile = gpu->CanonicalProfile(file.Field(r, profile_col));
      if (!profile.ok()) {
        return file.Error(r, profile_col, profile.status().message());
      }
      row.profile = *profile;
    } else {
      MIGSERVE_ASSIGN_OR_RETURN(int gb, file.Count(r, memory_col));
      auto it = ProfileOfMemory().find(gb);
      if (it == ProfileOfMemory().end()) {
        return file.Error(r, memory_col,
                          fmt::format("expected 5, 10, 20 or 40, got {}", gb));
      }
      row.profile = it->second;
    }
    MIGSERVE_ASSIGN_OR_RETURN(row.batch, file.Count(r, batch_col));
    MIGSERVE_ASSIGN_OR_RETURN(row.latency_ms, file.Number(r, latency_col));
    MIGSERVE_ASSIGN_OR_RETURN(row.throughput, file.Number(r, throughput_col));
    if (row.latency_ms <= 0) {
      return file.Error(r, latency_col, "must be > 0");
    }
    double expected = row.batch * 1000 / row.latency_ms;
    if (std::abs(row.throughput - expected) > 0.05 * expected) {
      row.throughput = Round3(expected);
      ++recomputed;
    }
    if (fb_col >= 0) {
      MIGSERVE_ASSIGN_OR_RETURN(double mib, file.Number(r, fb_col));
      row.memory_gb = Round3(mib / 1024);
    }
    row.line = r.line;
    out->profiles.rows.push_back(std::move(row));
    ++rows;
  }
  if (recomputed > 0) {
    out->warnings.push_back(fmt::format(
        "{}: throughput differs from batch_size x 1000 / latency by more than "
        "5% in {} of {} rows; recomputed as that",
        path, recomputed, rows));
  }
  return Status::Ok();
}

StatusOr<ImportedProfiles> ImportMigPerf(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".csv") {
      files.push_back(it->path());
    }
  }
  if (ec) {
    return Status::NotFound(fmt::format("{}: {}", dir, ec.message()));
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    return Status::NotFound(dir +
                            ": no .csv files (expected MIGProfiler's "
                            "data/ tree: A100-80g/infer/..., "
                            "A100-40g/infer_bsz/...)");
  }
  ImportedProfiles result;
  for (const std::filesystem::path& path : files) {
    std::string gpu;
    for (const std::filesystem::path& part : path) {
      auto it = GpuOfDirectory().find(part.string());
      if (it != GpuOfDirectory().end()) gpu = it->second;
    }
    if (gpu.empty()) {
      return Status::InvalidArgument(fmt::format(
          "{}: no A100-80g or A100-40g directory in its path names the GPU",
          path.string()));
    }
    MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path.string()));
    MIGSERVE_RETURN_IF_ERROR(
        ImportMigPerfCsv(text, path.string(), gpu, &result));
  }
  std::set<std::tuple<std::string, std::string, std::string, int>> seen;
  for (ProfileRow& row : result.profiles.rows) {
    if (!seen.emplace(row.model, row.gpu, row.profile, row.batch).second) {
      return Status::InvalidArgument(
          fmt::format("{} {} {} batch {} is measured twice under {}", row.model,
                      row.gpu, row.profile, row.batch, dir));
    }
    row.line = 0;
  }
  return result;
}

}  // namespace migserve::profile
