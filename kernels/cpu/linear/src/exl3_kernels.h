#pragma once

// Private to the EXL3 products (linear_exl3*.cpp): the inputs of a product
// prepared once per call, and the decode kernels that read each tile's
// packed words straight into vector registers.

#include <cstdint>
#include <vector>

#include "linear_internal.h"

namespace quire::kernels::linear_detail {

// Each 128-input block of a rotated row is rounded to 8 bits with a scale of
// its own for the integer (MUL1) kernels: the rotation has spread every
// outlier over its block, so one scale per block loses little (a relative
// error of about 1/700 of the block's largest value per input, well below
// the weights' own).
inline constexpr int kExl3InputBlock = 128;

struct Exl3Inputs {
  int rows = 0;
  // Decode rows (ProductRows::decode): the fast kernels' arithmetic, with
  // MUL1's integers made; prompt rows: exact codebook values.
  bool decode = false;
  std::int64_t padded_in = 0;
  std::vector<float> rotated;         // [rows, Kp]: H(x * suh), zero-extended
  std::vector<std::int8_t> integers;  // [rows, Kp]: rotated / its block's scale, rounded
  std::vector<float> block_scales;    // [rows, Kp / 128]
  // [rows]: the sum of each rotated row, of its rounded values where the
  // integers are made
  std::vector<float> row_sums;
};

// Fills `inputs` for rows [0, rows) of the product (the rotation always; the
// integers too when `integers`, which also marks them decode rows), spread
// over the pool.
void exl3_prepare_inputs(ThreadPool& pool, const Product& product, const Exl3Weight& weight,
                         bool integers, Exl3Inputs& inputs);

// Whether the 512-bit decode kernels can run: AVX-512 F, BW, VL, VBMI (byte
// permutes) and VNNI where QUIRE_CPU_VECTOR_BITS allows 512-bit code.
bool exl3_wide_supported();
// Whether MUL1 weights take vpdpbusd there (unless QUIRE_CPU_VNNI=0, which
// takes vpmaddubsw and vpmaddwd for the same sums, to test both).
bool exl3_wide_vnni();

// sums[r * Np + n] for rows [0, inputs.rows) and the 16-column tiles
// [tile_begin, tile_end): the rotated inputs times W^, before the output
// rotation. Prompt rows take every codebook's exact values. Decode rows:
// MUL1 the codebook's affine form in the byte sum with the 8-bit inputs;
// 3INST and MCG the FP16 pairs whose sum is the value, before its rounding
// to FP16. Needs exl3_wide_supported().
void exl3_wide_columns(const Exl3Weight& weight, const Exl3Inputs& inputs, std::int64_t tile_begin,
                       std::int64_t tile_end, float* sums);

// The 256 values of one tile exactly as exl3_codebook_table() gives them, in
// tile position order (the batched products' decoder). Needs
// exl3_wide_supported().
void exl3_wide_decode_tile(const std::uint16_t* tile, int bits, Exl3Codebook codebook, float* out);

// The same three with 256-bit registers (AVX2, FMA, F16C; AVX-VNNI where the
// processor has it): exl3_avx2_supported(). Their decode rows of 3INST and
// MCG take the exact values too.
bool exl3_avx2_supported();
void exl3_avx2_columns(const Exl3Weight& weight, const Exl3Inputs& inputs, std::int64_t tile_begin,
                       std::int64_t tile_end, float* sums);
void exl3_avx2_decode_tile(const std::uint16_t* tile, int bits, Exl3Codebook codebook, float* out);

}  // namespace quire::kernels::linear_detail
