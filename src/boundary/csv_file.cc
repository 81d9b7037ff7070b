#include "boundary/csv_file.h"

#include <fmt/format.h>

#include "boundary/plain_name.h"

namespace migserve {

StatusOr<CsvFile> CsvFile::Parse(std::string_view text, std::string source,
                                 std::string_view what) {
  auto records = ParseCsv(text);
  if (!records.ok()) return records.status().WithPrefix(source);
  if (records->empty()) {
    return Status::InvalidArgument(source + ":1: header: missing");
  }
  const CsvRecord& header = records->front();
  MIGSERVE_RETURN_IF_ERROR(CheckCommaSeparated(header, source, what));
  // A column given twice would be read from whichever comes first; a row
  // of another width has its fields under the wrong headers.
  for (size_t i = 0; i < header.fields.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      if (header.fields[k] == header.fields[i]) {
        return Status::InvalidArgument(
            fmt::format("{}:{}: header: column '{}' given twice", source,
                        header.line, header.fields[i]));
      }
    }
  }
  for (const CsvRecord& row : *records) {
    if (row.fields.size() != header.fields.size()) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: row: has {} fields, the header has {}", source,
                      row.line, row.fields.size(), header.fields.size()));
    }
  }
  return CsvFile(std::move(source), std::move(records).value());
}

int CsvFile::Find(std::string_view name) const {
  const std::vector<std::string>& fields = header().fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i] == name) return static_cast<int>(i);
  }
  return -1;
}

StatusOr<int> CsvFile::Require(std::string_view name) const {
  int column = Find(name);
  if (column >= 0) return column;
  return Status::InvalidArgument(
      fmt::format("{}:{}: header: missing column '{}' (has: {})", source_,
                  header().line, name, fmt::join(header().fields, ", ")));
}

std::string CsvFile::Field(const CsvRecord& row, int column) const {
  if (column < 0 || column >= static_cast<int>(row.fields.size())) return "";
  return row.fields[column];
}

StatusOr<double> CsvFile::Number(const CsvRecord& row, int column,
                                 const NumberRange& range) const {
  std::string f = Field(row, column);
  double value = 0;
  if (f.empty()) return Error(row, column, "missing");
  if (!ParseDouble(f, &value)) {
    return Error(row, column, fmt::format("not a finite number: '{}'", f));
  }
  std::string problem = OutOfRange(value, range);
  if (!problem.empty()) return Error(row, column, problem);
  return value;
}

StatusOr<int> CsvFile::Count(const CsvRecord& row, int column) const {
  std::string f = Field(row, column);
  int value = 0;
  if (!ParseInt(f, &value) || value <= 0) {
    return Error(row, column,
                 fmt::format("must be a positive integer, got '{}'", f));
  }
  return value;
}

StatusOr<std::string> CsvFile::PlainName(const CsvRecord& row,
                                         int column) const {
  std::string f = Field(row, column);
  if (f.empty()) return Error(row, column, "missing");
  if (std::string problem = PlainNameProblem(f); !problem.empty()) {
    return Error(row, column, problem);
  }
  return f;
}

Status CsvFile::Error(const CsvRecord& row, int column,
                      std::string_view reason) const {
  std::string name =
      column >= 0 && column < static_cast<int>(header().fields.size())
          ? header().fields[column]
          : "row";
  return Status::InvalidArgument(
      fmt::format("{}:{}: {}: {}", source_, row.line, name, reason));
}

Status CheckCommaSeparated(const CsvRecord& header, std::string_view source,
                           std::string_view what) {
  if (header.fields.size() != 1) return Status::Ok();
  for (char delimiter : {';', '\t', '|'}) {
    if (header.fields[0].find(delimiter) != std::string::npos) {
      return Status::InvalidArgument(fmt::format(
          "{}:{}: header: fields are separated by '{}'; {} are "
          "comma-separated",
          source, header.line,
          delimiter == '\t' ? "\\t" : std::string(1, delimiter), what));
    }
  }
  return Status::Ok();
}

}  // namespace migserve
