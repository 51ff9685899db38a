#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace quire::kernels {

// CPU reference of the quantized KV-cache codings. Every GPU kernel that reads
// or writes cache pages is checked against these functions.
//
// Integer formats (Q8: 8 bits, Q4: 4 bits; Q6 is 8-bit K with 4-bit V) work on
// groups of 32 consecutive elements of one head:
//   1. rotate the group with the orthonormal 32-point Hadamard transform;
//   2. scale = max |rotated|, rounded to FP16 (an all-zero group gets scale 0);
//   3. level = clamp(round_half_even(rotated / scale * 2^(b-1)) + 2^(b-1), 0, 2^b - 1);
//   4. pack: Q4 element e sits in nibble e % 8 of little-endian 32-bit word e / 8
//      (low nibble first), Q8 one byte per element.
// Dequantization inverts each step: (level - 2^(b-1)) * scale / 2^(b-1), then the
// same rotation. Storage: b bits per element + 16 bits per 32 elements.

inline constexpr int kCacheGroup = 32;

// One group: writes 32 levels and returns the FP16 bits of the scale.
std::uint16_t quantize_group(const float* values, int bits, std::uint8_t* levels);
void dequantize_group(const std::uint8_t* levels, std::uint16_t scale, int bits, float* out);

void pack_levels(std::span<const std::uint8_t> levels, int bits, std::span<std::uint8_t> packed);
void unpack_levels(std::span<const std::uint8_t> packed, int bits, std::span<std::uint8_t> levels);

// A whole vector (a multiple of 32 elements): packed.size() == values.size() * bits / 8,
// scales.size() == values.size() / 32.
void quantize_int(std::span<const float> values, int bits, std::span<std::uint8_t> packed,
                  std::span<std::uint16_t> scales);
void dequantize_int(std::span<const std::uint8_t> packed, std::span<const std::uint16_t> scales,
                    int bits, std::span<float> out);

// FP8 (E4M3) with one scale per (page, head). Scales are powers of two, so when
// a later token needs a larger scale the tokens already in the page are
// re-encoded by an exact exponent shift (only values that fall into the
// subnormal range lose bits). A page-head that has seen only zeros has scale 0.

// The smallest power of two s with absmax / s <= 448, or 0 for absmax == 0.
float fp8_scale_for(float absmax);

// One head of one page: token t's head_dim codes start at data + t * token_stride.
struct Fp8HeadBlock {
  std::uint8_t* data = nullptr;
  std::size_t token_stride = 0;
  int head_dim = 0;
};

// Encodes tokens [first, first + count) from `values` (count * head_dim floats,
// token-major). Tokens [0, first) are already encoded under `scale`, which
// grows (and re-encodes them) if the new values need it.
void fp8_write_head(const Fp8HeadBlock& block, int first, int count, std::span<const float> values,
                    float& scale);

// Calibrated FP8: codes[i] = E4M3(values[i] / scale), saturating at +-448;
// `scale` (> 0) is fixed for the whole cache, so nothing is re-encoded.
void fp8_write_calibrated(std::span<const float> values, float scale, std::uint8_t* codes);

// Decodes tokens [0, count) into `out` (count * head_dim floats).
void fp8_read_head(const Fp8HeadBlock& block, int count, float scale, std::span<float> out);

}  // namespace quire::kernels
