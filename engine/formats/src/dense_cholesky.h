#pragma once

// Private: the Cholesky factorization the quantizers' error feedback (EXL3's
// LDLQ, GPTQ) is built on, on small dense row-major matrices in doubles.

#include <cstdint>
#include <vector>

namespace quire::engine::formats::detail {

// The lower Cholesky factor C of the symmetric matrix `a` [size, size]
// (a = C C^T) in its lower triangle, in place; the upper triangle is left
// alone. False where a pivot is not positive (not positive definite, or
// rounding made it so).
bool cholesky(std::vector<double>& a, std::int64_t size);

// The inverse of a symmetric positive definite matrix from its lower
// Cholesky factor (as cholesky() leaves it), full and symmetric.
std::vector<double> inverse_from_cholesky(const std::vector<double>& factor, std::int64_t size);

}  // namespace quire::engine::formats::detail
