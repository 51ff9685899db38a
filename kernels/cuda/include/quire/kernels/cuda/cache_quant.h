#pragma once

#include <cstddef>
#include <cstdint>

// CUDA versions of the quantized cache codings in quire/kernels/cpu/cache_quant.h,
// bit-exact with them. All pointers are device pointers; work is queued on
// `stream` (a cudaStream_t; nullptr is the legacy default stream).

namespace quire::kernels::cuda {

using Stream = void*;

// `groups` groups of 32 floats -> packed levels (groups * 32 * bits / 8 bytes)
// and one FP16 scale per group.
void quantize_int(const float* values, std::size_t groups, int bits, std::uint8_t* packed,
                  std::uint16_t* scales, Stream stream);
void dequantize_int(const std::uint8_t* packed, const std::uint16_t* scales, std::size_t groups,
                    int bits, float* out, Stream stream);

// FP8 E4M3 with a power-of-two scale (see fp8_scale_for): `count` values.
void encode_e4m3(const float* values, std::size_t count, float scale, std::uint8_t* codes,
                 Stream stream);
void decode_e4m3(const std::uint8_t* codes, std::size_t count, float scale, float* out,
                 Stream stream);

}  // namespace quire::kernels::cuda
