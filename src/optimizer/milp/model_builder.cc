#include "optimizer/milp/model_builder.h"

#include <algorithm>
#include <coin/CoinPackedMatrix.hpp>

namespace migserve::optimizer {

Block ModelBuilder::AddColumns(int count, double lower, double upper,
                               double cost) {
  Block block{columns(), count};
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
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, columns());
  for (const auto& terms : rows_) {
    std::vector<int> index;
    std::vector<double> value;
    for (const auto& [column, coefficient] : terms) {
      index.push_back(column);
      value.push_back(coefficient);
    }
    matrix.appendRow(static_cast<int>(index.size()), index.data(),
                     value.data());
  }
  solver->loadProblem(matrix, lower_.data(), upper_.data(), objective_.data(),
                      row_lower_.data(), row_upper_.data());
  for (int c = 0; c < columns(); ++c) solver->setInteger(c);
  solver->messageHandler()->setLogLevel(0);
  solver->getModelPtr()->setLogLevel(0);
}

}  // namespace migserve::optimizer
