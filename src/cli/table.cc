#include "cli/table.h"

#include <algorithm>
#include <cctype>

namespace migserve::cli {
namespace {

bool LooksNumeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) ||
                        ((s[0] == '-' || s[0] == '+') && s.size() > 1 &&
                         std::isdigit(static_cast<unsigned char>(s[1]))));
}

}  // namespace

void TextTable::Print(std::ostream& out) const {
  std::vector<size_t> width(rows_[0].size(), 0);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  auto print_row = [&](const std::vector<std::string>& row, bool header) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string pad(width[c] - row[c].size(), ' ');
      line += (!header && LooksNumeric(row[c])) ? pad + row[c] : row[c] + pad;
      if (c + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(rows_[0], true);
  size_t total = 0;
  for (size_t w : width) total += w;
  out << std::string(total + 2 * (width.size() - 1), '-') << "\n";
  for (size_t r = 1; r < rows_.size(); ++r) print_row(rows_[r], false);
}

}  // namespace migserve::cli
