// A CSV file read by header name: other tools' files, whose columns are
// found by their header text wherever they stand, with every field error
// naming the file, line and column.
#ifndef MIGSERVE_BOUNDARY_CSV_FILE_H_
#define MIGSERVE_BOUNDARY_CSV_FILE_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "boundary/csv.h"
#include "boundary/number.h"
#include "util/status_or.h"

namespace migserve {

class CsvFile {
 public:
  // Parses `text` (from `source`, for messages): the first record is the
  // header. InvalidArgument "FILE:1: header: missing" for an empty file, a
  // header separated by ';', tab or '|' instead of commas (named, with
  // `what` the files that are comma-separated), a column headed twice, or a
  // row with more or fewer fields than the header.
  static StatusOr<CsvFile> Parse(std::string_view text, std::string source,
                                 std::string_view what = "CSV files");

  const CsvRecord& header() const { return records_.front(); }
  // The records after the header.
  std::span<const CsvRecord> Rows() const {
    return std::span<const CsvRecord>(records_).subspan(1);
  }

  // Index of the column headed `name`, or -1.
  int Find(std::string_view name) const;
  // Index of the column headed `name`; InvalidArgument "FILE:1: header:
  // missing column 'NAME' (has: ...)" if there is none.
  StatusOr<int> Require(std::string_view name) const;

  // The field in `column` of `row`; empty if the row is shorter or column
  // is -1. Errors below name the column by its header ("row" for -1).
  std::string Field(const CsvRecord& row, int column) const;
  // The field as a finite number within `range` (boundary/number.h).
  StatusOr<double> Number(const CsvRecord& row, int column,
                          const NumberRange& range = kNonNegativeRange) const;
  // The field as an integer > 0.
  StatusOr<int> Count(const CsvRecord& row, int column) const;
  // The field as a plain name (boundary/plain_name.h): "missing" if empty.
  StatusOr<std::string> PlainName(const CsvRecord& row, int column) const;
  // InvalidArgument "FILE:LINE: COLUMN: reason".
  Status Error(const CsvRecord& row, int column, std::string_view reason) const;

 private:
  CsvFile(std::string source, std::vector<CsvRecord> records)
      : source_(std::move(source)), records_(std::move(records)) {}

  std::string source_;
  std::vector<CsvRecord> records_;  // header first
};

// InvalidArgument naming the separator if `header` is one field holding ';',
// tab or '|': "FILE:LINE: header: fields are separated by ';'; WHAT are
// comma-separated". Ok otherwise.
Status CheckCommaSeparated(const CsvRecord& header, std::string_view source,
                           std::string_view what);

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_CSV_FILE_H_
