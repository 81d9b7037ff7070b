// Service cuts: a strong formulation of the exact model (DESIGN 5) built
// while solving. Whatever the prices of instances (one price per supply row),
// the instances a service gets cost at least the cheapest integer way to
// serve it, so sum_k price_k z_jk >= cover_j(price) holds for every integer
// solution. With the LP's supply duals as prices these cuts raise the LP to
// the bound of each service's integer hull (Dantzig-Wolfe), which on the
// paper's workloads rounds up to the optimum.
#ifndef MIGSERVE_OPTIMIZER_MILP_SERVICE_CUTS_H_
#define MIGSERVE_OPTIMIZER_MILP_SERVICE_CUTS_H_

#include <coin/CglCutGenerator.hpp>
#include <coin/OsiCuts.hpp>
#include <coin/OsiSolverInterface.hpp>
#include <vector>

namespace migserve::optimizer::milp {

// A least-cost integer way to serve one service: minimize sum_k price_k n_k
// subject to sum_k utility_k n_k >= demand, sum_k n_k >= least (its
// min_replicas), n_k >= 0 integer.
struct Cover {
  double cost = 0;
  std::vector<int> counts;  // per column; empty if no cover exists
};

// REQUIRES: prices >= 0, utilities > 0, as many of each.
Cover CheapestCover(const std::vector<double>& price,
                    const std::vector<double>& utility, double demand,
                    int least = 0);

// One service's instance columns in the model: the column, its utility and
// the supply row whose dual prices it.
struct ServiceColumns {
  double demand = 0;
  int least = 0;  // instances it must get (min_replicas)
  // survive: what it must keep after a loss, in units of its demand's rate,
  // besides its largest instance (a loss no surviving deployment escapes);
  // < 0: no survive.
  double keep = -1;
  std::vector<int> column;
  std::vector<double> utility;
  std::vector<int> supply_row;
  std::vector<int> uses;  // survive: per column, its "uses" binary
};

// The cheapest cover of `s` at `price`: CheapestCover, and with survive
// the cheapest over each largest instance it may use (columns of at most
// that utility, covering keep plus that utility too), which is the least
// cost of the service's integer hull under the spare rows.
Cover ServiceCover(const ServiceColumns& s, const std::vector<double>& price);

// Prices of `s`'s columns from the row duals (a supply row is <= with a
// non-positive dual; its price is the negated dual), at least `floor`.
std::vector<double> Prices(const ServiceColumns& s, const double* dual,
                           double floor);

// Adds to `cuts` the cut of every service that the LP solution `x` with row
// duals `dual` violates; returns how many.
int SeparateServiceCuts(const std::vector<ServiceColumns>& services,
                        const double* x, const double* dual, OsiCuts* cuts);

// Re-solves `solver` (which holds an optimal LP) with service cuts until none
// is violated, at most `rounds` times. Returns false if the LP became
// infeasible.
bool AddServiceCuts(const std::vector<ServiceColumns>& services, int rounds,
                    OsiSolverInterface* solver);

// Service cuts at every node of CBC's search. The cuts name the model's
// columns and read its supply rows' duals: use it only where CBC's
// preprocessing is off. CBC also runs the generators inside a heuristic's
// mini branch and bound (CbcHeuristic::smallBranchAndBound), on a
// preprocessed copy with fewer columns or rows, where a cut naming the
// model's columns is out of range (CBC 2.10 then crashed in
// CoinPackedMatrix::appendMinorFast): on any solver that is not the model
// of `columns` columns and at least `rows` rows it makes no cut.
class ServiceCutGenerator : public CglCutGenerator {
 public:
  ServiceCutGenerator(std::vector<ServiceColumns> services, int columns,
                      int rows)
      : services_(std::move(services)), columns_(columns), rows_(rows) {}

  CglCutGenerator* clone() const override {
    return new ServiceCutGenerator(*this);
  }

  void generateCuts(const OsiSolverInterface& si, OsiCuts& cs,
                    const CglTreeInfo info) override;

 private:
  std::vector<ServiceColumns> services_;
  int columns_;
  int rows_;
};

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_SERVICE_CUTS_H_
