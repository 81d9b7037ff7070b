#include "workload/parvagpu_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include "boundary/csv.h"
#include "boundary/input_file.h"

namespace migserve::workload {
namespace {

constexpr const char* kGpu = "A100-SXM4-80GB";

// ParvaGPU's "Mig instance" column counts GPCs; these are the A100-80GB
// profiles of those sizes.
const std::map<int, std::string>& ProfileOfSize() {
  static const auto* m = new std::map<int, std::string>{{1, "1g.10gb"},
                                                        {2, "2g.20gb"},
                                                        {3, "3g.40gb"},
                                                        {4, "4g.40gb"},
                                                        {7, "7g.80gb"}};
  return *m;
}

// Products such as 52.42 x 3 pick up binary noise; keep six decimals.
double Round6(double x) { return std::round(x * 1e6) / 1e6; }

Status FieldError(const std::string& path, int line, const char* column,
                  const std::string& reason) {
  return Status::InvalidArgument(
      fmt::format("{}:{}: {}: {}", path, line, column, reason));
}

Status ImportModel(const std::string& path, const std::string& model,
                   ParvaGpuImport* out) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto records = ParseCsv(text);
  if (!records.ok()) return records.status().WithPrefix(path);
  static constexpr const char* kColumns[] = {
      "Mig instance", "Batch size", "Workload Number", "Throughput", "Latency"};
  if (records->empty() ||
      records->front().fields !=
          std::vector<std::string>(kColumns, kColumns + 5)) {
    return FieldError(path, 1, "header",
                      "expected 'Mig instance,Batch size,Workload "
                      "Number,Throughput,Latency'");
  }
  std::map<std::tuple<int, int, int>, int> first_line;
  for (size_t r = 1; r < records->size(); ++r) {
    const CsvRecord& rec = (*records)[r];
    if (rec.fields.size() != 5) {
      return FieldError(
          path, rec.line, "row",
          fmt::format("has {} fields, expected 5", rec.fields.size()));
    }
    int size = 0, batch = 0, procs = 0;
    double per_proc = 0, seconds = 0;
    if (!ParseInt(rec.fields[0], &size) || !ProfileOfSize().contains(size)) {
      return FieldError(
          path, rec.line, kColumns[0],
          "expected 1, 2, 3, 4 or 7, got '" + rec.fields[0] + "'");
    }
    if (!ParseInt(rec.fields[1], &batch) || batch <= 0) {
      return FieldError(path, rec.line, kColumns[1], "not a positive integer");
    }
    if (!ParseInt(rec.fields[2], &procs) || procs <= 0) {
      return FieldError(path, rec.line, kColumns[2], "not a positive integer");
    }
    if (!ParseDouble(rec.fields[3], &per_proc) || per_proc < 0) {
      return FieldError(path, rec.line, kColumns[3], "not a number >= 0");
    }
    if (!ParseDouble(rec.fields[4], &seconds) || seconds < 0) {
      return FieldError(path, rec.line, kColumns[4], "not a number >= 0");
    }
    if (per_proc == 0 || seconds == 0) continue;  // not measured (OOM)
    auto [it, inserted] =
        first_line.emplace(std::make_tuple(size, batch, procs), rec.line);
    if (!inserted) {
      out->warnings.push_back(fmt::format(
          "{}:{}: duplicate of line {} (size {}, batch {}, {} procs): kept "
          "line {}",
          path, rec.line, it->second, size, batch, procs, it->second));
      continue;
    }
    profile::ProfileRow row;
    row.model = model;
    row.gpu = kGpu;
    row.profile = ProfileOfSize().at(size);
    row.batch = batch;
    row.procs = procs;
    row.throughput = Round6(per_proc * procs);
    row.latency_ms = Round6(seconds * 1000);
    out->profiles.rows.push_back(std::move(row));
  }
  return Status::Ok();
}

StatusOr<std::vector<CsvRecord>> ReadSloFile(const std::string& path,
                                             size_t models) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto records = ParseCsv(text);
  if (!records.ok()) return records.status().WithPrefix(path);
  for (const CsvRecord& rec : *records) {
    if (rec.fields.size() != models) {
      return FieldError(path, rec.line, "row",
                        fmt::format("has {} columns, expected one per model "
                                    "({})",
                                    rec.fields.size(), models));
    }
  }
  return records;
}

}  // namespace

StatusOr<ParvaGpuImport> ImportParvaGpu(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::path prof_dir = fs::path(dir) / "prof_data";
  std::error_code ec;
  if (!fs::is_directory(prof_dir, ec)) {
    return Status::NotFound(prof_dir.string() + ": no such directory");
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(prof_dir)) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ParvaGpuImport out;
  out.profiles.source = prof_dir.string();
  std::vector<std::string> models;
  for (const fs::path& f : files) {
    models.push_back(f.stem().string());
    MIGSERVE_RETURN_IF_ERROR(ImportModel(f.string(), models.back(), &out));
  }
  std::string rate_path = (fs::path(dir) / "SLO" / "SLO_req_rate.csv").string();
  std::string lat_path = (fs::path(dir) / "SLO" / "SLO_latency.csv").string();
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<CsvRecord> rates,
                            ReadSloFile(rate_path, models.size()));
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<CsvRecord> lats,
                            ReadSloFile(lat_path, models.size()));
  if (rates.size() != lats.size()) {
    return FieldError(lat_path, 1, "row",
                      fmt::format("{} scenarios, but {} has {}", lats.size(),
                                  rate_path, rates.size()));
  }
  for (size_t k = 0; k < rates.size(); ++k) {
    Workload w;
    w.source = rate_path;
    w.gpu = kGpu;
    w.offers = {{kGpu, 1}};
    w.latency_budget = kParvaLatencyBudget;
    w.max_procs = kParvaMaxProcs;
    for (size_t m = 0; m < models.size(); ++m) {
      const std::string& rate = rates[k].fields[m];
      const std::string& lat = lats[k].fields[m];
      if (rate == "N/A" && lat == "N/A") continue;
      Service s;
      s.name = models[m];
      s.model = models[m];
      s.line = rates[k].line;
      double required = 0;
      if (!ParseDouble(rate, &required) || required <= 0 ||
          !Rate::Of(required).ok()) {
        return FieldError(
            rate_path, rates[k].line, models[m].c_str(),
            fmt::format("expected a rate > 0 and at most {:g} or N/A, got '{}'",
                        kRateRange.max, rate));
      }
      s.throughput = Rate::Of(required).value();
      if (!ParseDouble(lat, &s.latency_ms) || s.latency_ms <= 0) {
        return FieldError(lat_path, lats[k].line, models[m].c_str(),
                          "expected a latency > 0 or N/A, got '" + lat + "'");
      }
      w.services.push_back(std::move(s));
    }
    out.scenarios.push_back(std::move(w));
  }
  return out;
}

}  // namespace migserve::workload
