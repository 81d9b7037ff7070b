#include "profile/perf_analyzer_import.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <tuple>

#include "boundary/csv_file.h"
#include "boundary/input_file.h"
#include "boundary/plain_name.h"
#include "mig/gpu_catalog.h"
#include "profile/sweep.h"

namespace migserve::profile {
namespace {

constexpr const char* kPattern = "MODEL__GPU__PROFILE__bBATCH[__pPROCS].csv";

// Fills what `options` leaves empty from the base name of `path`.
StatusOr<PerfAnalyzerOptions> FromFileName(const std::string& path,
                                           PerfAnalyzerOptions options) {
  std::string stem = std::filesystem::path(path).stem().string();
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    size_t next = stem.find("__", at);
    parts.push_back(stem.substr(at, next - at));
    if (next == std::string::npos) break;
    at = next + 2;
  }
  bool named = parts.size() == 4 || parts.size() == 5;
  int batch = 0, procs = 1;
  if (named) {
    named = parts[3].starts_with("b") &&
            ParseInt(std::string_view(parts[3]).substr(1), &batch) && batch > 0;
  }
  if (named && parts.size() == 5) {
    named = parts[4].starts_with("p") &&
            ParseInt(std::string_view(parts[4]).substr(1), &procs) && procs > 0;
  }
  if (named) {
    if (options.model.empty()) options.model = parts[0];
    if (options.gpu.empty()) options.gpu = parts[1];
    if (options.profile.empty()) options.profile = parts[2];
    if (options.batch == 0) options.batch = batch;
    if (options.procs == 0) options.procs = procs;
  }
  if (options.procs == 0) options.procs = 1;
  for (auto [flag, missing] : {std::pair{"--model", options.model.empty()},
                               std::pair{"--gpu", options.gpu.empty()},
                               std::pair{"--profile", options.profile.empty()},
                               std::pair{"--batch", options.batch == 0}}) {
    if (missing) {
      return Status::InvalidArgument(
          fmt::format("{}: {} not given, and the file name does not follow {}",
                      path, flag, kPattern));
    }
  }
  if (std::string problem = PlainNameProblem(options.model); !problem.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: the model (--model or the file name) {}", path, problem));
  }
  return options;
}

}  // namespace

StatusOr<ProfileRow> ImportPerfAnalyzerCsv(std::string_view text,
                                           const std::string& path,
                                           const PerfAnalyzerOptions& flags) {
  MIGSERVE_ASSIGN_OR_RETURN(PerfAnalyzerOptions options,
                            FromFileName(path, flags));
  MIGSERVE_ASSIGN_OR_RETURN(const mig::GpuModel* gpu,
                            mig::GpuCatalog::Default().Find(options.gpu));
  auto profile = gpu->CanonicalProfile(options.profile);
  if (!profile.ok()) return profile.status().WithPrefix(path);
  MIGSERVE_ASSIGN_OR_RETURN(CsvFile file, CsvFile::Parse(text, path));
  int load = file.Find("Concurrency");
  if (load < 0) load = file.Find("Request Rate");
  if (load < 0) {
    return Status::InvalidArgument(fmt::format(
        "{}:1: header: neither 'Concurrency' nor 'Request Rate' (is this a "
        "perf_analyzer -f file?)",
        path));
  }
  MIGSERVE_ASSIGN_OR_RETURN(int throughput, file.Require("Inferences/Second"));
  MIGSERVE_ASSIGN_OR_RETURN(int p50, file.Require("p50 latency"));
  MIGSERVE_ASSIGN_OR_RETURN(int p90, file.Require("p90 latency"));
  MIGSERVE_ASSIGN_OR_RETURN(int p99, file.Require("p99 latency"));

  std::vector<SweepPoint> points;
  for (const CsvRecord& r : file.Rows()) {
    SweepPoint p;
    MIGSERVE_ASSIGN_OR_RETURN(p.load, file.Number(r, load));
    MIGSERVE_ASSIGN_OR_RETURN(p.throughput, file.Number(r, throughput));
    MIGSERVE_ASSIGN_OR_RETURN(double us50, file.Number(r, p50));
    MIGSERVE_ASSIGN_OR_RETURN(double us90, file.Number(r, p90));
    MIGSERVE_ASSIGN_OR_RETURN(double us99, file.Number(r, p99));
    p.idle_ms = us50 / 1000;  // one request in flight at the lowest load
    p.p50_ms = us50 / 1000;
    p.p90_ms = us90 / 1000;
    p.p99_ms = us99 / 1000;
    points.push_back(p);
  }
  if (points.empty()) {
    return Status::InvalidArgument(path + ": no measurements after the header");
  }
  const SweepPoint& idle = IdlePoint(points);
  const SweepPoint* chosen = nullptr;
  const std::string load_name = file.header().fields[load];
  if (options.concurrency) {
    std::vector<std::string> loads;
    for (const SweepPoint& p : points) {
      if (p.load == *options.concurrency) chosen = &p;
      loads.push_back(fmt::format("{:g}", p.load));
    }
    if (!chosen) {
      return Status::NotFound(fmt::format("{}: no row with {} {:g} (has: {})",
                                          path, load_name, *options.concurrency,
                                          fmt::join(loads, ", ")));
    }
  } else {
    chosen = BestPoint(points, options.latency_limit_ms);
    if (!chosen) {
      return Status::NotFound(fmt::format(
          "{}: no row's p99 latency is within --latency-limit {:g} ms (the "
          "lowest is {:g} ms, at {} {:g})",
          path, *options.latency_limit_ms, idle.p99_ms, load_name, idle.load));
    }
  }
  ProfileRow row;
  row.model = options.model;
  row.gpu = gpu->name;
  row.profile = *profile;
  row.batch = options.batch;
  row.procs = options.procs;
  row.throughput = chosen->throughput;
  row.latency_ms = idle.idle_ms;
  row.latency_p50_ms = chosen->p50_ms;
  row.latency_p90_ms = chosen->p90_ms;
  row.latency_p99_ms = chosen->p99_ms;
  return row;
}

namespace {

// How far a row's throughput may exceed what its processes serve running
// one batch each at the idle batch time (transfers overlapping compute)
// before the server must have combined requests into larger batches.
constexpr double kOverlapAllowance = 1.5;

// A warning when `row` (from `path`) serves more than one batch of its size
// at a time allows: the server batched dynamically, and the row's batch and
// batch time credit a fraction of its throughput. Empty otherwise.
std::string DynamicBatchingWarning(const ProfileRow& row,
                                   const std::string& path) {
  double one_at_a_time = row.procs * row.batch * 1000 / row.latency_ms;
  if (row.throughput <= kOverlapAllowance * one_at_a_time) return "";
  return fmt::format(
      "{}: {:g}/s at batch {} is {:.1f}x what {} process(es) serve one batch "
      "of {} at a time in {:g} ms: the server batched requests together "
      "(dynamic batching), and this row credits a fraction of it; measure "
      "with perf_analyzer -b at the server's batch, or import Model "
      "Analyzer's sweep with its Max Batch Size column",
      path, row.throughput, row.batch, row.throughput / one_at_a_time,
      row.procs, row.batch, row.latency_ms);
}

}  // namespace

StatusOr<ImportedProfiles> ImportPerfAnalyzer(
    const std::vector<std::string>& paths, const PerfAnalyzerOptions& options) {
  ImportedProfiles out;
  ProfileTable& table = out.profiles;
  std::map<std::tuple<std::string, std::string, std::string, int, int>,
           std::string>
      file_of;
  for (const std::string& path : paths) {
    MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    MIGSERVE_ASSIGN_OR_RETURN(ProfileRow row,
                              ImportPerfAnalyzerCsv(text, path, options));
    auto [it, inserted] = file_of.emplace(
        std::make_tuple(row.model, row.gpu, row.profile, row.batch, row.procs),
        path);
    if (!inserted) {
      return Status::InvalidArgument(fmt::format(
          "{}: measures the same point as {} ({} {} {} batch {} procs {})",
          path, it->second, row.model, row.gpu, row.profile, row.batch,
          row.procs));
    }
    if (std::string w = DynamicBatchingWarning(row, path); !w.empty()) {
      out.warnings.push_back(std::move(w));
    }
    table.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace migserve::profile
