#include "optimizer/milp/model_builder.h"

#include <algorithm>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include "util/heap.h"

namespace migserve::optimizer::milp {

Block ModelBuilder::AddColumns(int count, double lower, double upper,
                               double cost, ColumnKind kind) {
  Block block{columns(), count};
  integer_.insert(integer_.end(), count, kind == ColumnKind::kInteger);
  lower_.insert(lower_.end(), count, lower);
  upper_.insert(upper_.end(), count, upper);
  objective_.insert(objective_.end(), count, cost);
  return block;
}

int ModelBuilder::AddRow(const Row& row, double lower, double upper) {
  std::vector<std::pair<int, double>> terms = row.terms();
  std::stable_sort(
      terms.begin(), terms.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  rows_.push_back(std::move(terms));
  row_lower_.push_back(lower);
  row_upper_.push_back(upper);
  return static_cast<int>(rows_.size()) - 1;
}

void ModelBuilder::Load(OsiClpSolverInterface* solver) const {
  // Every model CLP and CBC solve comes through here; their factorization
  // is freed and allocated again at each strong branching probe.
  KeepFreedHeap();
  // The rows in one piece: appended one by one, each row copied the whole
  // matrix (quadratic at 10,000 GPUs).
  std::vector<CoinBigIndex> start;
  std::vector<int> length;
  std::vector<int> index;
  std::vector<double> value;
  for (const auto& terms : rows_) {
    start.push_back(static_cast<CoinBigIndex>(index.size()));
    length.push_back(static_cast<int>(terms.size()));
    for (const auto& [column, coefficient] : terms) {
      index.push_back(column);
      value.push_back(coefficient);
    }
  }
  start.push_back(static_cast<CoinBigIndex>(index.size()));
  CoinPackedMatrix matrix(false, columns(), static_cast<int>(rows_.size()),
                          static_cast<CoinBigIndex>(index.size()), value.data(),
                          index.data(), start.data(), length.data());
  solver->loadProblem(matrix, lower_.data(), upper_.data(), objective_.data(),
                      row_lower_.data(), row_upper_.data());
  for (int c = 0; c < columns(); ++c) {
    if (integer_[c]) solver->setInteger(c);
  }
  solver->messageHandler()->setLogLevel(0);
  solver->getModelPtr()->setLogLevel(0);
}

}  // namespace migserve::optimizer::milp
