// A mixed-integer model built from blocks of columns and from rows, then
// loaded into CLP for CBC (the model builders of OR-tools and HiGHS are the
// models): callers name columns by block and offset instead of keeping
// offsets by hand. Columns are integer unless added as continuous.
#ifndef MIGSERVE_OPTIMIZER_MILP_MODEL_BUILDER_H_
#define MIGSERVE_OPTIMIZER_MILP_MODEL_BUILDER_H_

#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

// CLP's solver interface, which only the solver's own files name
// (solve.h is the way in for the rest).
class OsiClpSolverInterface;

namespace migserve::optimizer::milp {

// Consecutive columns: [first, first + size).
struct Block {
  int first = 0;
  int size = 0;

  int operator[](size_t k) const { return first + static_cast<int>(k); }
  int end() const { return first + size; }
};

// One row's terms, in any order.
class Row {
 public:
  void Add(int column, double coefficient) {
    terms_.emplace_back(column, coefficient);
  }
  const std::vector<std::pair<int, double>>& terms() const { return terms_; }

 private:
  std::vector<std::pair<int, double>> terms_;
};

// A bound that is not there (a row with no upper bound, say).
inline const double kUnbounded = std::numeric_limits<double>::max();

// Whether a column takes whole values only.
enum class ColumnKind { kInteger, kContinuous };

class ModelBuilder {
 public:
  // Adds `count` columns of `kind` with bounds [lower, upper] and objective
  // coefficient `cost`; returns them.
  Block AddColumns(int count, double lower, double upper, double cost,
                   ColumnKind kind = ColumnKind::kInteger);
  void SetLower(int column, double lower) { lower_[column] = lower; }
  void SetUpper(int column, double upper) { upper_[column] = upper; }

  // Adds lower <= row <= upper (kUnbounded: none); returns its
  // index. The terms are stored by column.
  int AddRow(const Row& row, double lower, double upper);

  int columns() const { return static_cast<int>(objective_.size()); }

  // Loads the model into `solver`, integer columns marked, with CLP's and
  // CBC's messages off (they print on stdout, which carries our output),
  // and the process's heap kept for reuse (util/heap.h).
  void Load(OsiClpSolverInterface* solver) const;

 private:
  std::vector<double> lower_, upper_, objective_;
  std::vector<bool> integer_;
  std::vector<std::vector<std::pair<int, double>>> rows_;
  std::vector<double> row_lower_, row_upper_;
};

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_MODEL_BUILDER_H_
