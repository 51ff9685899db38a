#include "dense_cholesky.h"

#include <cmath>

namespace quire::engine::formats::detail {

bool cholesky(std::vector<double>& a, std::int64_t size) {
  for (std::int64_t j = 0; j < size; ++j) {
    double* row_j = a.data() + j * size;
    double pivot = row_j[j];
    for (std::int64_t k = 0; k < j; ++k)
      pivot -= row_j[k] * row_j[k];
    if (!(pivot > 0.0)) return false;
    const double root = std::sqrt(pivot);
    row_j[j] = root;
    for (std::int64_t i = j + 1; i < size; ++i) {
      double* row_i = a.data() + i * size;
      double sum = row_i[j];
      for (std::int64_t k = 0; k < j; ++k)
        sum -= row_i[k] * row_j[k];
      row_i[j] = sum / root;
    }
  }
  return true;
}

std::vector<double> inverse_from_cholesky(const std::vector<double>& factor, std::int64_t size) {
  // Rows of C^-1 (lower triangular) by forward substitution, one column at a
  // time: C x = e_column.
  const auto n = static_cast<std::size_t>(size);
  std::vector<double> inverse_factor(n * n, 0.0);  // C^-1, lower
  for (std::int64_t column = 0; column < size; ++column) {
    for (std::int64_t i = column; i < size; ++i) {
      double sum = i == column ? 1.0 : 0.0;
      const double* c = factor.data() + i * size;
      for (std::int64_t k = column; k < i; ++k)
        sum -= c[k] * inverse_factor[std::size_t(k * size + column)];
      inverse_factor[std::size_t(i * size + column)] = sum / c[i];
    }
  }
  // A^-1 = C^-T C^-1: entry (i, j) sums C^-1[k, i] C^-1[k, j] over k >= max(i, j).
  std::vector<double> inverse(n * n, 0.0);
  for (std::int64_t k = 0; k < size; ++k) {
    const double* row = inverse_factor.data() + k * size;
    for (std::int64_t i = 0; i <= k; ++i) {
      const double scaled = row[i];
      if (scaled == 0.0) continue;
      double* out = inverse.data() + i * size;
      for (std::int64_t j = 0; j <= k; ++j)
        out[j] += scaled * row[j];
    }
  }
  return inverse;
}

}  // namespace quire::engine::formats::detail
