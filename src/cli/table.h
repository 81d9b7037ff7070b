// A plain-text table with aligned columns, for human-readable output.
#ifndef MIGSERVE_CLI_TABLE_H_
#define MIGSERVE_CLI_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

namespace migserve::cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header)
      : rows_{std::move(header)} {}

  // REQUIRES: row.size() equals the header's size.
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  // Writes the header, a rule, and the rows; numbers are right-aligned.
  void Print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_TABLE_H_
