// A minimal CSV reader for the profile format (RFC 4180 quoting, one record a
// line; fields never span lines).
#ifndef MIGSERVE_BOUNDARY_CSV_H_
#define MIGSERVE_BOUNDARY_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "util/status_or.h"

namespace migserve {

struct CsvRecord {
  int line = 0;  // 1-based line number in the source
  std::vector<std::string> fields;
};

// Splits `text` into records, skipping blank lines and a leading UTF-8 byte
// order mark; lines may end in LF or CRLF. Fields are trimmed of surrounding
// spaces. Returns InvalidArgument "line N: ..." for an
// unterminated quote.
StatusOr<std::vector<CsvRecord>> ParseCsv(std::string_view text);

// Parse a whole field as a finite number; return false if any character is
// left over or the text is not a number, or is inf or nan.
bool ParseDouble(std::string_view field, double* out);
bool ParseInt(std::string_view field, int* out);

// Returns `field` quoted if it holds a comma, quote or space at either end.
std::string CsvField(std::string_view field);

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_CSV_H_
