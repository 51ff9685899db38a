#include "quire/kernels/cpu/cache_quant.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "quire/kernels/cpu/fp8.h"
#include "quire/kernels/cpu/hadamard.h"
#include "quire/kernels/cpu/half.h"

namespace quire::kernels {
namespace {

void check_bits(int bits) {
  if (bits != 4 && bits != 8) {
    throw std::invalid_argument("cache quantization supports 4 or 8 bits, not " +
                                std::to_string(bits));
  }
}

void check_size(std::size_t actual, std::size_t expected, const char* what) {
  if (actual != expected) {
    throw std::invalid_argument(std::string(what) + " holds " + std::to_string(actual) +
                                " entries where " + std::to_string(expected) + " are needed");
  }
}

constexpr std::uint16_t kLargestHalf = 0x7bff;  // 65504

}  // namespace

std::uint16_t quantize_group(const float* values, int bits, std::uint8_t* levels) {
  check_bits(bits);
  float rotated[kCacheGroup];
  std::copy_n(values, kCacheGroup, rotated);
  hadamard32(rotated);

  float absmax = 0.0f;
  for (const float v : rotated)
    absmax = std::max(absmax, std::fabs(v));
  std::uint16_t scale_bits = float_to_half(absmax);
  if ((scale_bits & 0x7fffu) > kLargestHalf) scale_bits = kLargestHalf;  // beyond FP16: clamp
  const float scale = half_to_float(scale_bits);

  const int middle = 1 << (bits - 1);
  const int top = (1 << bits) - 1;
  if (scale == 0.0f) {
    // All zero (or below FP16's smallest subnormal): every element decodes to 0.
    std::fill_n(levels, kCacheGroup, static_cast<std::uint8_t>(middle));
    return 0;
  }
  const float factor = static_cast<float>(middle) / scale;
  for (int i = 0; i < kCacheGroup; ++i) {
    const float level = std::nearbyint(rotated[i] * factor) + static_cast<float>(middle);
    levels[i] = static_cast<std::uint8_t>(std::clamp(level, 0.0f, static_cast<float>(top)));
  }
  return scale_bits;
}

void dequantize_group(const std::uint8_t* levels, std::uint16_t scale, int bits, float* out) {
  check_bits(bits);
  const int middle = 1 << (bits - 1);
  const float step = half_to_float(scale) / static_cast<float>(middle);
  for (int i = 0; i < kCacheGroup; ++i) {
    out[i] = static_cast<float>(static_cast<int>(levels[i]) - middle) * step;
  }
  hadamard32(out);
}

void pack_levels(std::span<const std::uint8_t> levels, int bits, std::span<std::uint8_t> packed) {
  check_bits(bits);
  check_size(packed.size(), levels.size() * static_cast<std::size_t>(bits) / 8, "packed buffer");
  if (bits == 8) {
    std::copy(levels.begin(), levels.end(), packed.begin());
    return;
  }
  // Nibble e % 8 of little-endian word e / 8 is byte e / 2, low nibble for even e.
  for (std::size_t e = 0; e + 1 < levels.size(); e += 2) {
    packed[e / 2] = static_cast<std::uint8_t>((levels[e] & 0xfu) | ((levels[e + 1] & 0xfu) << 4));
  }
}

void unpack_levels(std::span<const std::uint8_t> packed, int bits, std::span<std::uint8_t> levels) {
  check_bits(bits);
  check_size(packed.size(), levels.size() * static_cast<std::size_t>(bits) / 8, "packed buffer");
  if (bits == 8) {
    std::copy(packed.begin(), packed.end(), levels.begin());
    return;
  }
  for (std::size_t e = 0; e + 1 < levels.size(); e += 2) {
    levels[e] = packed[e / 2] & 0xfu;
    levels[e + 1] = static_cast<std::uint8_t>(packed[e / 2] >> 4);
  }
}

void quantize_int(std::span<const float> values, int bits, std::span<std::uint8_t> packed,
                  std::span<std::uint16_t> scales) {
  check_bits(bits);
  if (values.size() % kCacheGroup != 0) {
    throw std::invalid_argument("quantized cache vectors must be a multiple of 32 elements");
  }
  check_size(scales.size(), values.size() / kCacheGroup, "scale buffer");
  check_size(packed.size(), values.size() * static_cast<std::size_t>(bits) / 8, "packed buffer");
  const std::size_t group_bytes = static_cast<std::size_t>(kCacheGroup * bits / 8);
  std::uint8_t levels[kCacheGroup];
  for (std::size_t g = 0; g < scales.size(); ++g) {
    scales[g] = quantize_group(values.data() + g * kCacheGroup, bits, levels);
    pack_levels(levels, bits, packed.subspan(g * group_bytes, group_bytes));
  }
}

void dequantize_int(std::span<const std::uint8_t> packed, std::span<const std::uint16_t> scales,
                    int bits, std::span<float> out) {
  check_bits(bits);
  if (out.size() % kCacheGroup != 0) {
    throw std::invalid_argument("quantized cache vectors must be a multiple of 32 elements");
  }
  check_size(scales.size(), out.size() / kCacheGroup, "scale buffer");
  check_size(packed.size(), out.size() * static_cast<std::size_t>(bits) / 8, "packed buffer");
  const std::size_t group_bytes = static_cast<std::size_t>(kCacheGroup * bits / 8);
  std::uint8_t levels[kCacheGroup];
  for (std::size_t g = 0; g < scales.size(); ++g) {
    unpack_levels(packed.subspan(g * group_bytes, group_bytes), bits, levels);
    dequantize_group(levels, scales[g], bits, out.data() + g * kCacheGroup);
  }
}

float fp8_scale_for(float absmax) {
  if (!(absmax > 0.0f)) return 0.0f;
  if (!std::isfinite(absmax)) throw std::invalid_argument("non-finite value written to the cache");
  int exponent = 0;
  const float mantissa = std::frexp(absmax / kE4m3Max, &exponent);  // in [0.5, 1)
  // absmax / 448 = mantissa * 2^exponent <= 2^exponent, with equality for 0.5 only.
  float scale = mantissa == 0.5f ? std::ldexp(1.0f, exponent - 1) : std::ldexp(1.0f, exponent);
  if (absmax / scale > kE4m3Max) scale *= 2.0f;  // the division above rounded down
  return scale;
}

void fp8_write_head(const Fp8HeadBlock& block, int first, int count, std::span<const float> values,
                    float& scale) {
  if (first < 0 || count < 0) throw std::invalid_argument("negative token range");
  check_size(values.size(), static_cast<std::size_t>(count) * block.head_dim, "value buffer");
  float absmax = 0.0f;
  for (const float v : values)
    absmax = std::max(absmax, std::fabs(v));
  const float needed = fp8_scale_for(absmax);

  if (needed > scale) {
    // Re-encode the tokens already there: a power-of-two ratio is an exponent shift.
    if (scale > 0.0f) {
      const float ratio = scale / needed;
      for (int t = 0; t < first; ++t) {
        std::uint8_t* codes = block.data + static_cast<std::size_t>(t) * block.token_stride;
        for (int d = 0; d < block.head_dim; ++d) {
          codes[d] = float_to_e4m3(e4m3_to_float(codes[d]) * ratio);
        }
      }
    }
    scale = needed;
  }
  const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;  // exact: scale is a power of two
  for (int t = 0; t < count; ++t) {
    std::uint8_t* codes = block.data + static_cast<std::size_t>(first + t) * block.token_stride;
    const float* source = values.data() + static_cast<std::size_t>(t) * block.head_dim;
    for (int d = 0; d < block.head_dim; ++d)
      codes[d] = float_to_e4m3(source[d] * inverse);
  }
}

void fp8_write_calibrated(std::span<const float> values, float scale, std::uint8_t* codes) {
  if (!(scale > 0.0f) || !std::isfinite(scale)) {
    throw std::invalid_argument("a calibrated FP8 scale must be positive and finite");
  }
  // A division, not a multiplication by 1 / scale: the scale is no power of
  // two, and llm-compressor divides.
  for (std::size_t i = 0; i < values.size(); ++i)
    codes[i] = float_to_e4m3(values[i] / scale);
}

void fp8_read_head(const Fp8HeadBlock& block, int count, float scale, std::span<float> out) {
  check_size(out.size(), static_cast<std::size_t>(count) * block.head_dim, "output buffer");
  for (int t = 0; t < count; ++t) {
    const std::uint8_t* codes = block.data + static_cast<std::size_t>(t) * block.token_stride;
    float* target = out.data() + static_cast<std::size_t>(t) * block.head_dim;
    for (int d = 0; d < block.head_dim; ++d)
      target[d] = e4m3_to_float(codes[d]) * scale;
  }
}

}  // namespace quire::kernels
