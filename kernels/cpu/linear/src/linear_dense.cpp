// Products with FP16, BF16, F32 and FP8 weights stored [N, K]: every output
// is a dot product along K, where both operands are contiguous.

#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

#include "linear_internal.h"
#include "quire/kernels/fp8.h"

namespace quire::kernels::linear_detail {
namespace {

struct WidenF32 {
  float operator()(float value) const { return value; }
};
struct WidenF16 {
  float operator()(std::uint16_t value) const { return widen_half(value); }
};
struct WidenBf16 {
  float operator()(std::uint16_t value) const { return widen_bf16(value); }
};
// The value of each of the 256 E4M3 codes.
const float* fp8_values() {
  static const std::array<float, 256> values = [] {
    std::array<float, 256> table{};
    for (int code = 0; code < 256; ++code)
      table[std::size_t(code)] = e4m3_to_float(static_cast<std::uint8_t>(code));
    return table;
  }();
  return values.data();
}

// FP8 (E4M3) through a table of its 256 values; the row's scale is applied
// to the finished sums (Product::scales).
struct WidenFp8 {
  const float* table = fp8_values();
  float operator()(std::uint8_t value) const { return table[value]; }
};

// FP32 sums over 16 independent lanes, so that the loop vectorizes without
// reassociating floating-point additions; the lanes are added pairwise.
inline constexpr int kLanes = 16;

QUIRE_LINEAR_INLINE float reduce_lanes(float* lanes, float tail) {
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int i = 0; i < width; ++i)
      lanes[i] += lanes[i + width];
  }
  return lanes[0] + tail;
}

template <typename Widen, typename Element>
QUIRE_LINEAR_INLINE float dot(const float* __restrict x, const Element* __restrict w,
                              std::int64_t count) {
  const Widen widen;
  float lanes[kLanes] = {};
  std::int64_t k = 0;
  for (; k + kLanes <= count; k += kLanes) {
    for (int i = 0; i < kLanes; ++i)
      lanes[i] += x[k + i] * widen(w[k + i]);
  }
  float tail = 0.0f;
  for (; k < count; ++k)
    tail += x[k] * widen(w[k]);
  return reduce_lanes(lanes, tail);
}

// FP16 weights: F16C widens a chunk of the row at a time (widen_halves), then
// the sums run exactly as above. Batch-1 decode is bound by this conversion
// otherwise.
template <>
QUIRE_LINEAR_INLINE float dot<WidenF16>(const float* __restrict x,
                                        const std::uint16_t* __restrict w, std::int64_t count) {
  constexpr std::int64_t kChunk = 256;  // a multiple of kLanes: lanes sum as above
  float widened[kChunk];
  float lanes[kLanes] = {};
  float tail = 0.0f;
  for (std::int64_t chunk = 0; chunk < count; chunk += kChunk) {
    const std::int64_t n = std::min(kChunk, count - chunk);
    widen_halves(w + chunk, n, widened);
    const float* __restrict xc = x + chunk;
    std::int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes) {
      for (int i = 0; i < kLanes; ++i)
        lanes[i] += xc[k + i] * widened[k + i];
    }
    for (; k < n; ++k)
      tail += xc[k] * widened[k];
  }
  return reduce_lanes(lanes, tail);
}

// Batched products widen a block of 32 inputs x T outputs into a tile laid
// out like the quantized formats' ([input][output], outputs contiguous), so
// the same vectorized update applies it to every row of the block. Outputs
// past N are zero.
template <typename Widen, int T, typename Element>
QUIRE_LINEAR_INLINE void widen_tile(const Element* weight, const Product& product,
                                    std::int64_t begin, std::int64_t k0, int count, float* tile) {
  const Widen widen;
  const std::int64_t in = product.in_features;
  const std::int64_t outputs = std::min<std::int64_t>(T, product.out_features - begin);
  if constexpr (std::is_same_v<Widen, WidenF16>) {
    // F16C widens and transposes the rows eight at a time: the strided
    // stores of one value at a time took a sixth of FP16 prefill time (1B
    // shape) before.
    const int whole = static_cast<int>(outputs) / 8 * 8;
    f16_widen_tile(weight + begin * in + k0, in, whole, count, T, tile);
    for (std::int64_t i = whole; i < outputs; ++i) {
      const Element* row = weight + (begin + i) * in + k0;
      for (int j = 0; j < count; ++j)
        tile[j * T + i] = widen(row[j]);
    }
  } else {
    for (std::int64_t i = 0; i < outputs; ++i) {
      const Element* row = weight + (begin + i) * in + k0;
      for (int j = 0; j < count; ++j)
        tile[j * T + i] = widen(row[j]);
    }
  }
  for (std::int64_t i = outputs; i < T; ++i) {
    for (int j = 0; j < count; ++j)
      tile[j * T + i] = 0.0f;
  }
}

template <typename Widen, int T, typename Element>
QUIRE_LINEAR_CLONES void run_tile(const Element* weight, const Product& product,
                                  std::int64_t row_begin, std::int64_t row_end, std::int64_t begin,
                                  std::vector<float>& acc) {
  const std::int64_t in = product.in_features;
  const std::int64_t rows = row_end - row_begin;
  acc.assign(std::size_t(rows * T), 0.0f);
  float tile[32 * T];
  for (std::int64_t k0 = 0; k0 < in; k0 += 32) {
    const int count = static_cast<int>(std::min<std::int64_t>(32, in - k0));
    widen_tile<Widen, T>(weight, product, begin, k0, count, tile);
    apply_tile<T>(product.x + row_begin * in + k0, in, rows, tile, count, acc.data());
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    store_outputs(product, row_begin + r, begin, T, acc.data() + r * T);
  }
}

// One input row: one dot product per output.
template <typename Widen, typename Element>
QUIRE_LINEAR_CLONES void dot_outputs(const Element* weight, const Product& product,
                                     std::int64_t begin, std::int64_t end) {
  for (std::int64_t n = begin; n < end; ++n) {
    const float value =
        dot<Widen>(product.x, weight + n * product.in_features, product.in_features);
    store_outputs(product, 0, n, 1, &value);
  }
}

// One input row of FP16 weights: the fused F16C path where the processor has
// it, the portable dot products otherwise.
void f16_outputs(const std::uint16_t* weight, const Product& product, std::int64_t begin,
                 std::int64_t end) {
  constexpr std::int64_t kBatch = 256;
  float values[kBatch];
  for (std::int64_t n = begin; n < end; n += kBatch) {
    const std::int64_t last = std::min(end, n + kBatch);
    if (!f16_dots(product.x, weight, product.in_features, n, last, values)) {
      dot_outputs<WidenF16>(weight, product, n, end);
      return;
    }
    store_outputs(product, 0, n, static_cast<int>(last - n), values);
  }
}

// A few input rows (a decode step of several jobs) of FP16 or FP8 weights,
// with f16_row_dots or fp8_row_dots: every weight row is widened in
// registers once for all of them, where the processor has F16C (writing a
// widened tile for a few rows cost several times the products).
template <typename Element>
using RowDots = void (*)(const float* x, std::int64_t rows, const Element* w, std::int64_t k_count,
                         std::int64_t begin, std::int64_t end, float* out);

template <typename Element>
void few_rows(ThreadPool& pool, const Element* weight, const Product& product,
              RowDots<Element> row_dots) {
  constexpr std::int64_t kBatch = 64;
  pool.parallel_for(product.out_features, 16, [&](std::int64_t begin, std::int64_t end) {
    float values[kF16FewRows * kBatch];
    for (std::int64_t n = begin; n < end; n += kBatch) {
      const std::int64_t last = std::min(end, n + kBatch);
      const int width = static_cast<int>(last - n);
      row_dots(product.x, product.rows, weight, product.in_features, n, last, values);
      for (std::int64_t r = 0; r < product.rows; ++r)
        store_outputs(product, r, n, width, values + r * width);
    }
  });
}

template <typename Widen, typename Element>
void run(ThreadPool& pool, const Product& product, const Element* weight) {
  if constexpr (std::is_same_v<Widen, WidenFp8>) {
    if (product.rows <= kF16FewRows && f16_dots_available()) {
      few_rows<std::uint8_t>(pool, weight, product, fp8_row_dots);
      return;
    }
  }
  if constexpr (std::is_same_v<Widen, WidenF16>) {
    if (product.rows == 1) {
      pool.parallel_for(product.out_features, 16, [&](std::int64_t begin, std::int64_t end) {
        f16_outputs(weight, product, begin, end);
      });
      return;
    }
    if (product.rows <= kF16FewRows && f16_dots_available()) {
      few_rows<std::uint16_t>(pool, weight, product, f16_row_dots);
      return;
    }
  }
  if (product.rows == 1) {
    pool.parallel_for(product.out_features, 8, [&](std::int64_t begin, std::int64_t end) {
      dot_outputs<Widen>(weight, product, begin, end);
    });
    return;
  }
  const TileGrid grid(product.rows, (product.out_features + 7) / 8 * 8);
  pool.parallel_for(grid.size(), 1, [&](std::int64_t first, std::int64_t last) {
    std::vector<float> acc;
    for (std::int64_t item = first; item < last; ++item) {
      const ColumnTile& tile = grid.tile(item);
      if (tile.width == kWideTile) {
        run_tile<Widen, kWideTile>(weight, product, grid.row_begin(item), grid.row_end(item),
                                   tile.begin, acc);
      } else {
        run_tile<Widen, kNarrowTile>(weight, product, grid.row_begin(item), grid.row_end(item),
                                     tile.begin, acc);
      }
    }
  });
}

}  // namespace

void fp8_product(ThreadPool& pool, const Product& product, const Fp8Weight& weight) {
  Product scaled = product;
  scaled.scales = weight.scales;
  run<WidenFp8>(pool, scaled, weight.data);
}

void dense_product(ThreadPool& pool, const Product& product, const DenseWeight& weight) {
  switch (weight.dtype) {
    case DType::F16:
      run<WidenF16>(pool, product, static_cast<const std::uint16_t*>(weight.data));
      break;
    case DType::BF16:
      run<WidenBf16>(pool, product, static_cast<const std::uint16_t*>(weight.data));
      break;
    default:
      run<WidenF32>(pool, product, static_cast<const float*>(weight.data));
      break;
  }
}

}  // namespace quire::kernels::linear_detail
