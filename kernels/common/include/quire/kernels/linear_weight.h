#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "quire/kernels/dtype.h"

namespace quire::kernels {

// The weight of one linear layer, y = x W^T + b, in one of the formats Quire
// runs. All pointers are in the memory of the device that holds the layer.
// K = in_features, N = out_features.

// FP16, BF16 or F32 weights as Hugging Face stores them: [N, K], row-major.
struct DenseWeight {
  const void* data = nullptr;
  DType dtype = DType::F16;
};

// One group of an EXL2 weight, along the permuted input dimension.
struct Exl2Group {
  int bits = 0;       // 2, 3, 4, 5, 6 or 8
  int rows = 0;       // input rows in the group; rows * bits is a multiple of 32
  int first_row = 0;  // first permuted input row
  int q_row = 0;      // first q_weight row holding the group
};

// EXL2 (exllamav2). Stored transposed: quantized row k of the [K, N] matrix is
// input row perm[k]. Value j of a 32-row block of one column occupies bits
// [j*b, (j+1)*b) of `bits` consecutive q_weight words (rows) of that column.
// Dequantized: W[perm[k], n] = (q - 2^(b-1)) * qs^2 * q_scale_max[g] / 256 with
// qs - 1 the 4-bit value at bits 4*(n%8) of q_scale[g, n/8].
// exllamav2's converter pads the columns of q_weight and q_scale to a multiple
// of 32 (padding columns hold zero weights), so a layer whose N is not one has
// q_columns > N; the extra outputs are never written.
struct Exl2Weight {
  const std::uint32_t* q_weight = nullptr;     // [sum(rows*bits/32), q_columns]
  const std::uint32_t* q_scale = nullptr;      // [G, q_columns/8]
  const std::uint16_t* q_scale_max = nullptr;  // FP16 [G]
  const std::int32_t* perm = nullptr;          // [K], argsort of the file's q_invperm
  std::vector<Exl2Group> groups;               // host memory, in order
  std::int64_t q_columns = 0;                  // row length of q_weight; 0 means N
};

// Group-quantized integers in GPTQ's layout, 4 or 8 bits: GPTQ itself, and
// the formats Quire repacks into it at load (AutoAWQ's GEMM layout,
// compressed-tensors' pack-quantized and naive int8), whose arithmetic is the
// same. With P = 32 / bits values per word, dequantized:
//   W[n, k] = (q[k, n] - zero[g, n]) * scales[g, n],  g = g_idx[k] (or k / group_size),
// q the bits at bits * (k % P) of qweight[k / P, n]; zero the bits at
// bits * (n % P) of qzeros[g, n / P], plus one unless the checkpoint stores
// exact zeros (gptq_v2); a symmetric weight has no qzeros and every zero
// point is 2^(bits - 1), the offset its unsigned values carry.
struct GptqWeight {
  const std::uint32_t* qweight = nullptr;  // [K / P, N]
  const std::uint32_t* qzeros = nullptr;   // [G, N / P], or nullptr: symmetric
  const void* scales = nullptr;            // [G, N] of scale_dtype
  const std::int32_t* g_idx = nullptr;     // [K], or nullptr for k / group_size
  int groups = 0;
  int group_size = 0;
  bool exact_zeros = false;
  int bits = 4;                    // 4 or 8
  DType scale_dtype = DType::F16;  // F16, BF16 or F32, as the checkpoint stores them
};

// FP8 as compressed-tensors' float-quantized checkpoints store it
// (llm-compressor's FP8 schemes): [N, K] row-major F8_E4M3 values and a
// scale per output row. Dequantized: W[n, k] = e4m3(data[n, k]) * scales[n];
// a checkpoint's one per-tensor scale is repeated for every row.
struct Fp8Weight {
  const std::uint8_t* data = nullptr;  // [N, K]
  const float* scales = nullptr;       // F32 [N]
};

// EXL3's codebooks: how a tile position's 16-bit trellis state becomes an
// FP16 weight (exllamav3's quant/codebook.cuh). three_inst is QTIP's
// multiply-add-xor hash; mcg multiplies by 0xCBAC1FED before the same mask;
// mul1 multiplies by 0x83DCD12D and maps the sum of the product's bytes
// affinely to FP16.
enum class Exl3Codebook : std::uint8_t { three_inst, mcg, mul1 };
// The hashes' multipliers (fixed in exllamav3 since October 2025; the mcg
// and mul1 tensors a converted model carries hold them, and mark the codebook).
inline constexpr std::uint32_t kExl3McgMultiplier = 0xCBAC1FEDu;
inline constexpr std::uint32_t kExl3Mul1Multiplier = 0x83DCD12Du;

// EXL3 (exllamav3), a trellis-coded weight between two Hadamard rotations.
// With Kp and Np the inputs and outputs padded to multiples of 128 (the
// converter pads; padded inputs see zeros, padded outputs are dropped):
//   y = H(H(x * suh) * W^) * svh,
// H the orthonormal 128-point Walsh-Hadamard transform of each block of 128
// (natural order) and W^ [Kp, Np] coded in 16x16 tiles. Tile (kt, nt) is the
// 16 * bits FP16-sized words trellis + (kt * Np / 16 + nt) * 16 * bits: a
// stream of 256 * bits bits, most significant first in each 32-bit word
// (word j = trellis[2j] | trellis[2j + 1] << 16), holding one `bits`-wide
// symbol per tile position. Position t's state is the 16 stream bits ending
// at bit (t + 1) * bits, wrapping around the tile's end (tail-biting), and its
// codebook value is weight (row, column) of the tile given by
// exl3_tile_row/exl3_tile_column (the tensor-core order exllamav3 stores).
struct Exl3Weight {
  const std::uint16_t* trellis = nullptr;  // [Kp / 16, Np / 16, 16 * bits]
  const std::uint16_t* suh = nullptr;      // FP16 [Kp]: input signs and scales
  const std::uint16_t* svh = nullptr;      // FP16 [Np]: output signs and scales
  int bits = 0;                            // 1 to 8
  Exl3Codebook codebook = Exl3Codebook::mul1;
  std::int64_t padded_in = 0;   // Kp, a multiple of 128 with K <= Kp < K + 128
  std::int64_t padded_out = 0;  // Np, likewise for N
};

struct LinearWeight {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  std::variant<DenseWeight, Exl2Weight, GptqWeight, Fp8Weight, Exl3Weight> format;
  const void* bias = nullptr;  // [N] or nullptr
  DType bias_dtype = DType::F16;
};

// Whose rows a product multiplies. decode: one new token of each sequence of
// a decode step. A backend may round those rows' inputs more coarsely for
// speed (the CPU's EXL2 kernel takes 8-bit inputs there, as llama.cpp does
// in all its quantized products), and then does so alike for any number of
// rows, so that a sequence's tokens do not depend on how many others decode
// beside it. prompt: everything else (prompts, their tails, draft tokens to
// verify), which keeps the precise products.
enum class ProductRows { prompt, decode };

}  // namespace quire::kernels
