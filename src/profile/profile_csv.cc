#include "profile/profile_csv.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "boundary/csv_file.h"
#include "boundary/input_file.h"
#include "mig/gpu_catalog.h"

namespace migserve::profile {
namespace {

constexpr const char* kColumns[] = {
    "model",          "gpu",           "profile",
    "batch",          "procs",         "throughput",
    "latency_ms",     "memory_gb",     "latency_p50_ms",
    "latency_p90_ms", "latency_p99_ms"};
constexpr bool kRequired[] = {true, true,  true,  true,  false, true,
                              true, false, false, false, false};
constexpr int kNumColumns = 11;
// The optional columns written only when a row has a value.
constexpr int kFirstPercentile = 8;

// One row's fields by canonical column (index into kColumns): optional
// columns may be empty, the rest are read and checked by CsvFile.
class RowReader {
 public:
  RowReader(const CsvFile& file, const CsvRecord& record,
            const std::vector<int>& column_of)
      : file_(file), record_(record), column_of_(column_of) {}

  // The field of column `c`, empty if absent.
  std::string Field(int c) const { return file_.Field(record_, column_of_[c]); }

  Status Error(int c, const std::string& reason) const {
    return file_.Error(record_, column_of_[c], reason);
  }

  Status Text(int c, std::string* out) const {
    *out = Field(c);
    if (out->empty() && kRequired[c]) return Error(c, "missing");
    return Status::Ok();
  }

  StatusOr<std::string> PlainName(int c) const {
    return file_.PlainName(record_, column_of_[c]);
  }

  Status Number(int c, double* out, const NumberRange& range) const {
    if (Field(c).empty()) {
      return kRequired[c] ? Error(c, "missing") : Status::Ok();
    }
    MIGSERVE_ASSIGN_OR_RETURN(*out,
                              file_.Number(record_, column_of_[c], range));
    return Status::Ok();
  }

  Status OptionalNumber(int c, std::optional<double>* out,
                        const NumberRange& range) const {
    if (Field(c).empty()) return Status::Ok();
    MIGSERVE_ASSIGN_OR_RETURN(*out,
                              file_.Number(record_, column_of_[c], range));
    return Status::Ok();
  }

  Status Count(int c, int* out) const {
    if (Field(c).empty()) {
      return kRequired[c] ? Error(c, "missing") : Status::Ok();
    }
    MIGSERVE_ASSIGN_OR_RETURN(*out, file_.Count(record_, column_of_[c]));
    return Status::Ok();
  }

 private:
  const CsvFile& file_;
  const CsvRecord& record_;
  const std::vector<int>& column_of_;
};

}  // namespace

StatusOr<ProfileTable> ParseProfileCsv(const std::string& text,
                                       const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(CsvFile file,
                            CsvFile::Parse(text, source, "profile CSVs"));
  const CsvRecord& header = file.header();
  std::vector<int> column_of(kNumColumns, -1);
  for (size_t i = 0; i < header.fields.size(); ++i) {
    for (int c = 0; c < kNumColumns; ++c) {
      if (header.fields[i] == kColumns[c]) column_of[c] = static_cast<int>(i);
    }
  }
  for (int c = 0; c < kNumColumns; ++c) {
    if (kRequired[c] && column_of[c] < 0) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: header: missing column '{}'", source, header.line,
                      kColumns[c]));
    }
  }
  const mig::GpuCatalog& catalog = mig::GpuCatalog::Default();
  ProfileTable table;
  table.source = source;
  std::map<std::tuple<std::string, std::string, std::string, int, int>, int>
      first_line;
  for (const CsvRecord& record : file.Rows()) {
    RowReader reader(file, record, column_of);
    ProfileRow row;
    row.line = record.line;
    MIGSERVE_ASSIGN_OR_RETURN(row.model, reader.PlainName(0));
    MIGSERVE_RETURN_IF_ERROR(reader.Text(1, &row.gpu));
    MIGSERVE_RETURN_IF_ERROR(reader.Text(2, &row.profile));
    MIGSERVE_RETURN_IF_ERROR(reader.Count(3, &row.batch));
    MIGSERVE_RETURN_IF_ERROR(reader.Count(4, &row.procs));
    MIGSERVE_RETURN_IF_ERROR(reader.Number(5, &row.throughput, kRateRange));
    MIGSERVE_RETURN_IF_ERROR(
        reader.Number(6, &row.latency_ms, kLatencyMsRange));
    MIGSERVE_RETURN_IF_ERROR(
        reader.OptionalNumber(7, &row.memory_gb, kMemoryGbRange));
    for (auto [c, p] :
         {std::pair{8, &row.latency_p50_ms}, std::pair{9, &row.latency_p90_ms},
          std::pair{10, &row.latency_p99_ms}}) {
      MIGSERVE_RETURN_IF_ERROR(reader.OptionalNumber(c, p, kLatencyMsRange));
    }
    auto gpu = catalog.Find(row.gpu);
    if (!gpu.ok()) return reader.Error(1, gpu.status().message());
    auto profile = (*gpu)->CanonicalProfile(row.profile);
    if (!profile.ok()) return reader.Error(2, profile.status().message());
    row.profile = *profile;
    auto key =
        std::make_tuple(row.model, row.gpu, row.profile, row.batch, row.procs);
    auto [it, inserted] = first_line.emplace(key, row.line);
    if (!inserted) {
      return Status::InvalidArgument(fmt::format(
          "{}:{}: row: duplicates line {} ({} {} {} batch {} procs {})", source,
          row.line, it->second, row.model, row.gpu, row.profile, row.batch,
          row.procs));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

StatusOr<ProfileTable> LoadProfileCsv(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseProfileCsv(text, path);
}

std::string FormatProfileCsv(const ProfileTable& table) {
  bool percentiles = false;
  for (const ProfileRow& r : table.rows) {
    percentiles |= r.latency_p50_ms || r.latency_p90_ms || r.latency_p99_ms;
  }
  int columns = percentiles ? kNumColumns : kFirstPercentile;
  auto optional = [](const std::optional<double>& v) {
    return v ? fmt::format("{}", *v) : std::string();
  };
  std::string out =
      fmt::format("{}\n", fmt::join(kColumns, kColumns + columns, ","));
  for (const ProfileRow& r : table.rows) {
    out += fmt::format("{},{},{},{},{},{},{},{}", CsvField(r.model),
                       CsvField(r.gpu), CsvField(r.profile), r.batch, r.procs,
                       r.throughput, r.latency_ms, optional(r.memory_gb));
    if (percentiles) {
      out +=
          fmt::format(",{},{},{}", optional(r.latency_p50_ms),
                      optional(r.latency_p90_ms), optional(r.latency_p99_ms));
    }
    out += "\n";
  }
  return out;
}

}  // namespace migserve::profile
