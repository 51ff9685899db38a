#include "exl3_ldlq.h"

#include <cmath>
#include <stdexcept>

#include "dense_cholesky.h"
#include "exl3_regularize.h"

namespace quire::engine::formats::detail {
namespace {

constexpr std::int64_t kLdlBlock = 16;

// The inverse of a lower triangular 16x16 block of `a` at (first, first).
std::vector<double> inverse_of_block(const std::vector<double>& a, std::int64_t size,
                                     std::int64_t first) {
  std::vector<double> inverse(kLdlBlock * kLdlBlock, 0.0);
  const auto at = [&](std::int64_t i, std::int64_t j) {
    return a[std::size_t((first + i) * size + first + j)];
  };
  for (std::int64_t column = 0; column < kLdlBlock; ++column) {
    // Forward substitution for column `column` of the inverse.
    for (std::int64_t i = column; i < kLdlBlock; ++i) {
      double sum = i == column ? 1.0 : 0.0;
      for (std::int64_t k = column; k < i; ++k)
        sum -= at(i, k) * inverse[std::size_t(k * kLdlBlock + column)];
      inverse[std::size_t(i * kLdlBlock + column)] = sum / at(i, i);
    }
  }
  return inverse;
}

}  // namespace

std::vector<double> rotate_hessian(std::span<const double> hessian, std::span<const double> su) {
  const auto size = static_cast<std::int64_t>(su.size());
  std::vector<double> rotated(hessian.begin(), hessian.end());
  for (std::int64_t i = 0; i < size; ++i) {
    for (std::int64_t j = 0; j < size; ++j)
      rotated[std::size_t(i * size + j)] *= su[std::size_t(i)] * su[std::size_t(j)];
  }
  hadamard_columns(rotated, size, size);
  hadamard_rows(rotated, size, size);
  return rotated;
}

std::vector<double> ldl_feedback(std::vector<double> hessian, std::int64_t size, double damping) {
  double mean = 0.0;
  for (std::int64_t i = 0; i < size; ++i)
    mean += hessian[std::size_t(i * size + i)] / double(size);
  std::vector<double> factor = hessian;
  for (int attempt = 0; !cholesky(factor, size); ++attempt) {
    if (attempt == 10) {
      throw std::runtime_error(
          "EXL3 quantizer: the calibration inputs do not determine the layer's weights (their "
          "Hessian "
          "is not positive definite, even with damping); give a longer or more varied calibration "
          "text, or quantize without --calibration");
    }
    for (std::int64_t i = 0; i < size; ++i)
      hessian[std::size_t(i * size + i)] += 2.0 * damping * mean;
    factor = hessian;
  }
  // H = C C^T with C lower triangular; with Dk the diagonal blocks of C,
  // L = C diag(Dk^-1) is unit lower triangular in blocks and H = L D L^T
  // with D = diag(Dk Dk^T).
  std::vector<double> feedback(static_cast<std::size_t>(size * size), 0.0);
  std::vector<double> row(kLdlBlock);
  for (std::int64_t first = 0; first < size; first += kLdlBlock) {
    const std::vector<double> inverse = inverse_of_block(factor, size, first);
    for (std::int64_t i = first + kLdlBlock; i < size; ++i) {
      const double* c = factor.data() + i * size + first;
      for (std::int64_t j = 0; j < kLdlBlock; ++j) {
        double sum = 0.0;
        for (std::int64_t k = j; k < kLdlBlock; ++k)
          sum += c[k] * inverse[std::size_t(k * kLdlBlock + j)];
        row[std::size_t(j)] = sum;
      }
      for (std::int64_t j = 0; j < kLdlBlock; ++j)
        feedback[std::size_t(i * size + first + j)] = row[std::size_t(j)];
    }
  }
  return feedback;
}

}  // namespace quire::engine::formats::detail
