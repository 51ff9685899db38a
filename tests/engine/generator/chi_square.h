#pragma once

// Pearson's chi-square goodness-of-fit test, for tests that check a sampled
// histogram against the distribution it should follow.

#include <cstdint>
#include <span>

namespace quire::test {

// The regularized lower incomplete gamma function P(a, x) (a > 0, x >= 0).
double regularized_gamma_p(double a, double x);

// The x at which the chi-square distribution with `degrees_of_freedom` has
// an upper tail of `significance`: a statistic above it rejects the fit at
// that significance.
double chi_square_critical_value(int degrees_of_freedom, double significance);

struct ChiSquareFit {
  double statistic = 0;
  int degrees_of_freedom = 0;
  double critical_value = 0;
  // A draw fell where the distribution gives probability 0.
  bool impossible_outcome = false;

  bool fits() const { return !impossible_outcome && statistic < critical_value; }
};

// Compares `observed` counts with `probabilities` (one per outcome, summing
// to 1). Outcomes whose expected count is below 5 are pooled into one bin,
// as the test's approximation asks; outcomes of probability 0 are no bin,
// and a count on one marks the fit impossible.
ChiSquareFit pearson_fit(std::span<const std::int64_t> observed,
                         std::span<const double> probabilities, double significance);

}  // namespace quire::test
