#include "profile/model_analyzer_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "boundary/csv_file.h"
#include "boundary/input_file.h"
#include "mig/gpu_catalog.h"
#include "profile/sweep.h"

namespace migserve::profile {
namespace {

// "2:GPU" -> 2; "1:GPU,2:CPU" -> 1 (GPU instances only); "" -> 1.
StatusOr<int> GpuInstances(const CsvFile& file, const CsvRecord& row,
                           int column) {
  std::string text = file.Field(row, column);
  if (text.empty()) return 1;
  int total = 0;
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find_first_of(",/", at);
    if (end == std::string::npos) end = text.size();
    std::string group = text.substr(at, end - at);
    size_t colon = group.find(':');
    int count = 0;
    if (colon == std::string::npos ||
        !ParseInt(group.substr(0, colon), &count) || count <= 0) {
      return file.Error(
          row, column,
          fmt::format("expected COUNT:KIND as in '2:GPU', got '{}'", text));
    }
    if (group.substr(colon + 1) == "GPU") total += count;
    at = end + 1;
  }
  if (total == 0) {
    return file.Error(row, column,
                      fmt::format("no GPU instances in '{}'", text));
  }
  return total;
}

// The batch the server ran at a point: the client's batch `client`, or,
// where the server may batch dynamically up to `max_batch` (> client),
// what the requests in flight at each busy instance add up to.
int ServerBatch(int client, double concurrency, int procs, int max_batch) {
  if (max_batch <= client) return client;
  double per_instance = std::max(1.0, concurrency / procs);
  return static_cast<int>(
      std::min<double>(max_batch, client * std::round(per_instance)));
}

}  // namespace

StatusOr<ImportedProfiles> ImportModelAnalyzerCsv(
    std::string_view text, const std::string& path,
    const ModelAnalyzerOptions& options) {
  MIGSERVE_ASSIGN_OR_RETURN(const mig::GpuModel* gpu,
                            mig::GpuCatalog::Default().Find(options.gpu));
  MIGSERVE_ASSIGN_OR_RETURN(std::string profile,
                            gpu->CanonicalProfile(options.profile));
  MIGSERVE_ASSIGN_OR_RETURN(CsvFile file, CsvFile::Parse(text, path));
  MIGSERVE_ASSIGN_OR_RETURN(int model_col, file.Require("Model"));
  MIGSERVE_ASSIGN_OR_RETURN(int batch_col, file.Require("Batch"));
  MIGSERVE_ASSIGN_OR_RETURN(int concurrency_col, file.Require("Concurrency"));
  MIGSERVE_ASSIGN_OR_RETURN(int group_col, file.Require("Instance Group"));
  MIGSERVE_ASSIGN_OR_RETURN(int throughput_col,
                            file.Require("Throughput (infer/sec)"));
  MIGSERVE_ASSIGN_OR_RETURN(int p99_col, file.Require("p99 Latency (ms)"));
  int p90_col = file.Find("p90 Latency (ms)");
  int avg_col = file.Find("Avg Latency (ms)");
  int max_batch_col = file.Find("Max Batch Size");

  using Key = std::tuple<std::string, int, int>;  // model, batch, procs
  std::map<Key, std::vector<SweepPoint>> groups;
  std::set<std::string> models;
  bool client_batch_one = false;
  for (const CsvRecord& r : file.Rows()) {
    MIGSERVE_ASSIGN_OR_RETURN(std::string model, file.PlainName(r, model_col));
    models.insert(model);
    if (!options.model.empty() && model != options.model) continue;
    MIGSERVE_ASSIGN_OR_RETURN(int client, file.Count(r, batch_col));
    MIGSERVE_ASSIGN_OR_RETURN(int procs, GpuInstances(file, r, group_col));
    int max_batch = 0;
    if (max_batch_col >= 0) {
      MIGSERVE_ASSIGN_OR_RETURN(max_batch, file.Count(r, max_batch_col));
    }
    SweepPoint p;
    MIGSERVE_ASSIGN_OR_RETURN(p.load, file.Number(r, concurrency_col));
    MIGSERVE_ASSIGN_OR_RETURN(p.throughput, file.Number(r, throughput_col));
    MIGSERVE_ASSIGN_OR_RETURN(p.p99_ms, file.Number(r, p99_col));
    if (p90_col >= 0) {
      MIGSERVE_ASSIGN_OR_RETURN(p.p90_ms, file.Number(r, p90_col));
    }
    if (p.throughput == 0) continue;  // a failed measurement
    client_batch_one |= client == 1 && max_batch_col < 0;
    int batch = ServerBatch(client, p.load, procs, max_batch);
    if (avg_col >= 0) {
      MIGSERVE_ASSIGN_OR_RETURN(p.idle_ms, file.Number(r, avg_col));
    } else {
      // Little's law for the busy instances, each running one batch.
      double busy = std::min<double>(procs, p.load);
      p.idle_ms = std::round(busy * batch * 1e6 / p.throughput) / 1000;
    }
    groups[Key{model, batch, procs}].push_back(p);
  }
  if (!options.model.empty() && !models.contains(options.model)) {
    return Status::NotFound(fmt::format("{}: no rows of model '{}' (has: {})",
                                        path, options.model,
                                        fmt::join(models, ", ")));
  }
  ImportedProfiles out;
  ProfileTable& table = out.profiles;
  for (const auto& [key, points] : groups) {
    const SweepPoint* chosen = BestPoint(points, options.latency_limit_ms);
    if (!chosen) continue;  // no point within the limit
    ProfileRow row;
    row.model = std::get<0>(key);
    row.gpu = gpu->name;
    row.profile = profile;
    row.batch = std::get<1>(key);
    row.procs = std::get<2>(key);
    row.throughput = chosen->throughput;
    row.latency_ms = IdlePoint(points).idle_ms;
    row.latency_p90_ms = chosen->p90_ms;
    row.latency_p99_ms = chosen->p99_ms;
    table.rows.push_back(std::move(row));
  }
  if (table.rows.empty()) {
    return Status::NotFound(fmt::format(
        "{}: no measured point{}", path,
        options.latency_limit_ms
            ? fmt::format(" has a p99 latency within --latency-limit {:g} ms",
                          *options.latency_limit_ms)
            : std::string()));
  }
  if (client_batch_one) {
    out.warnings.push_back(fmt::format(
        "{}: rows of client batch 1 without a Max Batch Size column are "
        "imported as batch-1 serving; if the server batched dynamically, "
        "export the column (Model Analyzer's default) or these rows credit "
        "a fraction of what it serves",
        path));
  }
  return out;
}

StatusOr<ImportedProfiles> ImportModelAnalyzer(
    const std::string& path, const ModelAnalyzerOptions& options) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ImportModelAnalyzerCsv(text, path, options);
}

}  // namespace migserve::profile
