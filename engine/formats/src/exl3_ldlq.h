#pragma once

// Private to the EXL3 quantizer: the error feedback of LDLQ (QuIP's name for
// GPTQ's update, as exllamav3 runs it on 16-row blocks).
//
// With H the Hessian of the coded weight's inputs and H = L D L^T its block
// LDL decomposition (L unit lower triangular in blocks of 16, D block
// diagonal), coding the blocks of rows from the last to the first with
// targets W[r] + sum over later rows m of L[m, r] (W[m] - W^[m]) makes the
// output error tr((W - W^)^T H (W - W^)) the sum of each block's own coding
// error (target minus coded) weighted by D: each block takes up what the
// blocks coded before it got wrong, as far as its inputs correlate.

#include <cstdint>
#include <span>
#include <vector>

namespace quire::engine::formats::detail {

// The Hessian of the coded weight's inputs from that of the layer's (both
// [Kp, Kp]): those inputs are (x * su) H128, so it is H128 diag(su) H
// diag(su) H128. (exllamav3 rotates with su's signs alone, before the input
// scales are chosen; the scales change which errors matter, so Quire keeps
// them.)
std::vector<double> rotate_hessian(std::span<const double> hessian, std::span<const double> su);

// L of the block LDL decomposition of `hessian` [size, size], with its
// diagonal blocks (the identity) set to 0: L[m, r] for m > r is row m's
// error's share in row r's target. Where rounding makes the matrix not
// positive definite, more of `damping` times its mean diagonal is added,
// up to ten times, before std::runtime_error.
std::vector<double> ldl_feedback(std::vector<double> hessian, std::int64_t size, double damping);

}  // namespace quire::engine::formats::detail
