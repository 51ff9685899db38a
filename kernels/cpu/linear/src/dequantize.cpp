// Dequantization to a dense matrix, written for clarity rather than speed: it
// is the reference the products are tested against, so it reads the packed
// formats bit by bit, independently of the unpacking the products use.

#include <algorithm>
#include <type_traits>

#include "linear_internal.h"
#include "quire/kernels/cpu/exl2_scale.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "quire/kernels/fp8.h"

namespace quire::kernels {
namespace {

// Bit `bit` of the little-endian stream formed by words[0], words[stride], ...
std::uint32_t stream_bit(const std::uint32_t* words, std::int64_t stride, std::int64_t bit) {
  return (words[(bit / 32) * stride] >> (bit % 32)) & 1u;
}

std::uint32_t stream_value(const std::uint32_t* words, std::int64_t stride, std::int64_t first_bit,
                           int bits) {
  std::uint32_t value = 0;
  for (int b = 0; b < bits; ++b)
    value |= stream_bit(words, stride, first_bit + b) << b;
  return value;
}

void dequantize_dense(const LinearWeight& weight, const DenseWeight& dense, float* out) {
  const std::int64_t count = weight.in_features * weight.out_features;
  for (std::int64_t i = 0; i < count; ++i) {
    switch (dense.dtype) {
      case DType::F16:
        out[i] = half_to_float(static_cast<const std::uint16_t*>(dense.data)[i]);
        break;
      case DType::BF16:
        out[i] = bf16_to_float(static_cast<const std::uint16_t*>(dense.data)[i]);
        break;
      default:
        out[i] = static_cast<const float*>(dense.data)[i];
        break;
    }
  }
}

void dequantize_exl2(const LinearWeight& weight, const Exl2Weight& exl2, float* out) {
  const std::int64_t in = weight.in_features;
  const std::int64_t columns = exl2.q_columns == 0 ? weight.out_features : exl2.q_columns;
  for (std::size_t g = 0; g < exl2.groups.size(); ++g) {
    const Exl2Group& group = exl2.groups[g];
    for (std::int64_t n = 0; n < weight.out_features; ++n) {
      const std::uint32_t scale_word = exl2.q_scale[std::int64_t(g) * (columns / 8) + n / 8];
      const int qs = static_cast<int>((scale_word >> (4 * (n % 8))) & 15u) + 1;
      const float scale = exl2_scale(qs, exl2.q_scale_max[g]);
      for (int j = 0; j < group.rows; ++j) {
        // Row j of the group is value j % 32 of its block of 32 rows, which
        // occupies `bits` words starting at q_row + (j / 32) * bits.
        const std::int64_t block_row = group.q_row + std::int64_t(j / 32) * group.bits;
        const std::uint32_t* words = exl2.q_weight + block_row * columns + n;
        const auto q = static_cast<int>(
            stream_value(words, columns, std::int64_t(j % 32) * group.bits, group.bits));
        const std::int64_t k = exl2.perm[group.first_row + j];
        out[n * in + k] = static_cast<float>(q - (1 << (group.bits - 1))) * scale;
      }
    }
  }
}

void dequantize_fp8(const LinearWeight& weight, const Fp8Weight& fp8, float* out) {
  for (std::int64_t n = 0; n < weight.out_features; ++n) {
    for (std::int64_t k = 0; k < weight.in_features; ++k) {
      const std::int64_t i = n * weight.in_features + k;
      out[i] = e4m3_to_float(fp8.data[i]) * fp8.scales[n];
    }
  }
}

float scale_value(const void* scales, DType dtype, std::int64_t index) {
  switch (dtype) {
    case DType::BF16:
      return bf16_to_float(static_cast<const std::uint16_t*>(scales)[index]);
    case DType::F32:
      return static_cast<const float*>(scales)[index];
    default:
      return half_to_float(static_cast<const std::uint16_t*>(scales)[index]);
  }
}

// Values run along K in qweight's columns and zero points along N in qzeros'
// rows, each a little-endian bit stream of `bits`-wide integers.
void dequantize_gptq(const LinearWeight& weight, const GptqWeight& gptq, float* out) {
  const std::int64_t in = weight.in_features;
  const std::int64_t columns = weight.out_features;
  const int bits = gptq.bits;
  const std::int64_t zero_words = columns * bits / 32;  // a row of qzeros
  for (std::int64_t n = 0; n < columns; ++n) {
    for (std::int64_t k = 0; k < in; ++k) {
      const std::int64_t g = gptq.g_idx ? gptq.g_idx[k] : k / gptq.group_size;
      const auto q = static_cast<int>(stream_value(gptq.qweight + n, columns, k * bits, bits));
      int zero = 1 << (bits - 1);
      if (gptq.qzeros != nullptr) {
        const auto stored =
            static_cast<int>(stream_value(gptq.qzeros + g * zero_words, 1, n * bits, bits));
        zero = stored + (gptq.exact_zeros ? 0 : 1);
      }
      out[n * in + k] = static_cast<float>(q - zero) *
                        scale_value(gptq.scales, gptq.scale_dtype, g * columns + n);
    }
  }
}

// W = diag(suh) H W^ H diag(svh) in exllamav3's [K, N] orientation, written
// out as [N, K], in double precision from the bit-by-bit state reader.
void dequantize_exl3(const LinearWeight& weight, const Exl3Weight& exl3, float* out) {
  const std::int64_t kp = exl3.padded_in;
  const std::int64_t np = exl3.padded_out;
  const std::int64_t tiles_n = np / kExl3TileSide;
  const int words = exl3_tile_words(exl3.bits);
  std::vector<double> w(std::size_t(kp * np));  // [Kp, Np]
  for (std::int64_t kt = 0; kt < kp / kExl3TileSide; ++kt) {
    for (std::int64_t nt = 0; nt < tiles_n; ++nt) {
      const std::uint16_t* tile = exl3.trellis + (kt * tiles_n + nt) * words;
      for (int t = 0; t < kExl3TileWeights; ++t) {
        const std::int64_t k = kt * kExl3TileSide + exl3_tile_row(t);
        const std::int64_t n = nt * kExl3TileSide + exl3_tile_column(t);
        w[std::size_t(k * np + n)] =
            exl3_codebook_value(exl3_state(tile, exl3.bits, t), exl3.codebook);
      }
    }
  }
  std::vector<double> line(std::size_t(std::max(kp, np)));
  // H along the inputs: each column's blocks of 128.
  for (std::int64_t n = 0; n < np; ++n) {
    for (std::int64_t k = 0; k < kp; ++k)
      line[std::size_t(k)] = w[std::size_t(k * np + n)];
    for (std::int64_t k = 0; k < kp; k += kExl3RotationSize)
      exl3_hadamard128(line.data() + k);
    for (std::int64_t k = 0; k < kp; ++k)
      w[std::size_t(k * np + n)] = line[std::size_t(k)] * half_to_float(exl3.suh[k]);
  }
  // H along the outputs: each row's blocks of 128.
  for (std::int64_t k = 0; k < weight.in_features; ++k) {
    double* row = w.data() + k * np;
    for (std::int64_t n = 0; n < np; n += kExl3RotationSize)
      exl3_hadamard128(row + n);
    for (std::int64_t n = 0; n < weight.out_features; ++n)
      out[n * weight.in_features + k] = static_cast<float>(row[n] * half_to_float(exl3.svh[n]));
  }
}

}  // namespace

std::vector<float> dequantize(const LinearWeight& weight) {
  linear_detail::check_weight(weight);
  std::vector<float> out(std::size_t(weight.in_features * weight.out_features));
  std::visit(
      [&](const auto& format) {
        using Format = std::decay_t<decltype(format)>;
        if constexpr (std::is_same_v<Format, DenseWeight>) {
          dequantize_dense(weight, format, out.data());
        } else if constexpr (std::is_same_v<Format, Exl2Weight>) {
          dequantize_exl2(weight, format, out.data());
        } else if constexpr (std::is_same_v<Format, GptqWeight>) {
          dequantize_gptq(weight, format, out.data());
        } else if constexpr (std::is_same_v<Format, Exl3Weight>) {
          dequantize_exl3(weight, format, out.data());
        } else {
          dequantize_fp8(weight, format, out.data());
        }
      },
      weight.format);
  return out;
}

}  // namespace quire::kernels
