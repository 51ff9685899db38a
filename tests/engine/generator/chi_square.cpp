#include "chi_square.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace quire::test {

double regularized_gamma_p(double a, double x) {
  if (!(a > 0) || x < 0) throw std::invalid_argument("regularized_gamma_p needs a > 0, x >= 0");
  if (x == 0) return 0;
  // x^a e^-x / Gamma(a), the factor both expansions share.
  const double prefix = std::exp(a * std::log(x) - x - std::lgamma(a));
  constexpr double kEpsilon = 1e-15;
  if (x < a + 1) {
    // The series sum x^n / (a (a+1) ... (a+n)) converges fast here.
    double term = 1 / a;
    double sum = term;
    for (int n = 1; n < 1000 && std::abs(term) > std::abs(sum) * kEpsilon; ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return prefix * sum;
  }
  // Otherwise the continued fraction for Q(a, x) = 1 - P(a, x), evaluated by
  // the modified Lentz method.
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a;
  double c = 1 / kTiny;
  double d = 1 / b;
  double fraction = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    fraction *= step;
    if (std::abs(step - 1) < kEpsilon) break;
  }
  return 1 - prefix * fraction;
}

double chi_square_critical_value(int degrees_of_freedom, double significance) {
  if (degrees_of_freedom < 1 || !(significance > 0 && significance < 1)) {
    throw std::invalid_argument("chi_square_critical_value needs dof >= 1, 0 < significance < 1");
  }
  const double half = degrees_of_freedom / 2.0;
  const auto upper_tail = [half](double x) { return 1 - regularized_gamma_p(half, x / 2); };
  // The tail falls as x grows: widen until it is below the significance,
  // then bisect.
  double low = 0;
  double high = degrees_of_freedom + 10.0;
  while (upper_tail(high) > significance)
    high *= 2;
  for (int i = 0; i < 200; ++i) {
    const double middle = (low + high) / 2;
    (upper_tail(middle) > significance ? low : high) = middle;
  }
  return (low + high) / 2;
}

ChiSquareFit pearson_fit(std::span<const std::int64_t> observed,
                         std::span<const double> probabilities, double significance) {
  if (observed.size() != probabilities.size()) {
    throw std::invalid_argument("pearson_fit needs one probability per observed count");
  }
  std::int64_t draws = 0;
  for (const std::int64_t count : observed)
    draws += count;
  ChiSquareFit fit;
  int bins = 0;
  double pooled_expected = 0;
  double pooled_observed = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    const auto count = static_cast<double>(observed[i]);
    if (probabilities[i] <= 0) {
      if (count > 0) fit.impossible_outcome = true;
      continue;
    }
    const double expected = probabilities[i] * static_cast<double>(draws);
    if (expected < 5) {
      pooled_expected += expected;
      pooled_observed += count;
      continue;
    }
    fit.statistic += (count - expected) * (count - expected) / expected;
    ++bins;
  }
  if (pooled_expected > 0) {
    fit.statistic +=
        (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
    ++bins;
  }
  fit.degrees_of_freedom = bins - 1;
  // One bin leaves nothing to test but impossible outcomes.
  fit.critical_value = fit.degrees_of_freedom > 0
                           ? chi_square_critical_value(fit.degrees_of_freedom, significance)
                           : std::numeric_limits<double>::infinity();
  return fit;
}

}  // namespace quire::test
