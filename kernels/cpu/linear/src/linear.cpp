#include "quire/kernels/cpu/linear.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "linear_internal.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/linear_checks.h"

namespace quire::kernels {
namespace linear_detail {
namespace {

std::vector<float> widen_bias(const LinearWeight& weight) {
  std::vector<float> bias;
  if (weight.bias == nullptr) return bias;
  bias.resize(std::size_t(weight.out_features));
  for (std::size_t n = 0; n < bias.size(); ++n) {
    switch (weight.bias_dtype) {
      case DType::F16:
        bias[n] = half_to_float(static_cast<const std::uint16_t*>(weight.bias)[n]);
        break;
      case DType::BF16:
        bias[n] = bf16_to_float(static_cast<const std::uint16_t*>(weight.bias)[n]);
        break;
      default:
        bias[n] = static_cast<const float*>(weight.bias)[n];
        break;
    }
  }
  return bias;
}

}  // namespace

void check_weight(const LinearWeight& weight) {
  check_linear_descriptor(weight);
  if (const auto* gptq = std::get_if<GptqWeight>(&weight.format); gptq && gptq->g_idx) {
    check_gptq_group_indices(gptq->g_idx, weight.in_features, gptq->groups);
  }
}

TileGrid::TileGrid(std::int64_t rows, std::int64_t columns)
    : rows_(rows), row_blocks_(std::max<std::int64_t>(1, (rows + kRowBlock - 1) / kRowBlock)) {
  std::int64_t begin = 0;
  for (; begin + kWideTile <= columns; begin += kWideTile)
    tiles_.push_back({begin, kWideTile});
  for (; begin < columns; begin += kNarrowTile)
    tiles_.push_back({begin, kNarrowTile});
}

std::int64_t TileGrid::row_end(std::int64_t item) const {
  return std::min(rows_, row_begin(item) + kRowBlock);
}

void store_outputs(const Product& product, std::int64_t row, std::int64_t begin, int width,
                   const float* values) {
  const std::int64_t count = std::min<std::int64_t>(width, product.out_features - begin);
  float* target = product.out + row * product.out_features + begin;
  if (product.scales != nullptr) {
    const float* scales = product.scales + begin;
    const float* bias = product.bias != nullptr ? product.bias + begin : nullptr;
    for (std::int64_t i = 0; i < count; ++i)
      target[i] = values[i] * scales[i] + (bias != nullptr ? bias[i] : 0.0f);
  } else if (product.bias != nullptr) {
    for (std::int64_t i = 0; i < count; ++i)
      target[i] = values[i] + product.bias[begin + i];
  } else {
    std::copy(values, values + count, target);
  }
}

}  // namespace linear_detail

static_assert(kInvariantDecodeRows <= linear_detail::kF16FewRows &&
                  kInvariantDecodeRows <= linear_detail::kExl2FewRows,
              "decode rows that are invariant take the few-row kernels");

namespace {

void check_call(const float* x, std::int64_t rows, const LinearWeight& weight, const float* out) {
  linear_detail::check_weight(weight);
  if (rows < 0) throw std::invalid_argument("linear: negative row count");
  if (rows > 0 && (x == nullptr || out == nullptr)) {
    throw std::invalid_argument("linear: null input or output");
  }
}

}  // namespace

void linear(ThreadPool& pool, const float* x, std::int64_t rows, const LinearWeight& weight,
            float* out, ProductRows kind) {
  check_call(x, rows, weight, out);
  if (rows == 0) return;
  const std::vector<float> bias = linear_detail::widen_bias(weight);
  const linear_detail::Product product{x,
                                       rows,
                                       weight.in_features,
                                       weight.out_features,
                                       bias.empty() ? nullptr : bias.data(),
                                       out,
                                       nullptr,
                                       kind};
  std::visit(
      [&](const auto& format) {
        using Format = std::decay_t<decltype(format)>;
        if constexpr (std::is_same_v<Format, DenseWeight>) {
          linear_detail::dense_product(pool, product, format);
        } else if constexpr (std::is_same_v<Format, Exl2Weight>) {
          linear_detail::exl2_product(pool, product, format);
        } else if constexpr (std::is_same_v<Format, GptqWeight>) {
          linear_detail::gptq_product(pool, product, format);
        } else if constexpr (std::is_same_v<Format, Exl3Weight>) {
          linear_detail::exl3_product(pool, product, format);
        } else {
          linear_detail::fp8_product(pool, product, format);
        }
      },
      weight.format);
}

void linear_many(ThreadPool& pool, const float* x, std::int64_t rows,
                 std::span<const LinearWeight* const> weights, std::span<float* const> outs,
                 ProductRows kind) {
  if (weights.size() != outs.size()) {
    throw std::invalid_argument("linear_many: " + std::to_string(weights.size()) + " weights but " +
                                std::to_string(outs.size()) + " outputs");
  }
  for (std::size_t i = 0; i < weights.size(); ++i)
    check_call(x, rows, *weights[i], outs[i]);
  if (rows == 0) return;
  // Decode steps with EXL2 weights: every slice of every product in one
  // loop; EXL3 products of few rows in another. Everything else runs
  // product by product.
  struct Few {
    std::vector<float> bias;
    linear_detail::ScratchLease<std::vector<float>> xp;
    std::unique_ptr<linear_detail::Exl2FewRows> work;
  };
  std::vector<Few> few;
  few.reserve(weights.size());
  std::vector<std::size_t> first_slice{0};
  // EXL3 products of few rows share one loop of their own.
  std::vector<std::vector<float>> exl3_biases;
  std::vector<linear_detail::Product> exl3_products;
  std::vector<const Exl3Weight*> exl3_weights;
  exl3_biases.reserve(weights.size());
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const LinearWeight& weight = *weights[i];
    if (const auto* exl3 = std::get_if<Exl3Weight>(&weight.format)) {
      exl3_biases.push_back(linear_detail::widen_bias(weight));
      const linear_detail::Product product{
          x,
          rows,
          weight.in_features,
          weight.out_features,
          exl3_biases.back().empty() ? nullptr : exl3_biases.back().data(),
          outs[i],
          nullptr,
          kind};
      if (linear_detail::exl3_products_together(product)) {
        exl3_products.push_back(product);
        exl3_weights.push_back(exl3);
        continue;
      }
    }
    const auto* exl2 = std::get_if<Exl2Weight>(&weight.format);
    if (exl2 == nullptr || rows > linear_detail::kExl2FewRows) {
      linear(pool, x, rows, weight, outs[i], kind);
      continue;
    }
    Few& item = few.emplace_back();
    item.bias = linear_detail::widen_bias(weight);
    const linear_detail::Product product{x,
                                         rows,
                                         weight.in_features,
                                         weight.out_features,
                                         item.bias.empty() ? nullptr : item.bias.data(),
                                         outs[i],
                                         nullptr,
                                         kind};
    // The slices gather their own inputs into it.
    linear_detail::grow_to(*item.xp, std::size_t(rows * weight.in_features));
    item.work = std::make_unique<linear_detail::Exl2FewRows>(
        product, *exl2, linear_detail::exl2_columns(product, *exl2), item.xp->data());
    first_slice.push_back(first_slice.back() + item.work->slices());
  }
  if (!exl3_products.empty()) linear_detail::exl3_products(pool, exl3_products, exl3_weights);
  if (few.empty()) return;
  pool.parallel_for(
      static_cast<std::int64_t>(first_slice.back()), 1, [&](std::int64_t begin, std::int64_t end) {
        for (auto s = std::size_t(begin); s < std::size_t(end); ++s) {
          const std::size_t p =
              std::size_t(std::upper_bound(first_slice.begin(), first_slice.end(), s) -
                          first_slice.begin() - 1);
          few[p].work->run_slice(s - first_slice[p]);
        }
      });
  for (Few& item : few)
    item.work->finish();
}

std::vector<std::pair<std::string, std::string>> linear_kernel_paths() {
  using namespace linear_detail;
  const std::string portable = vectorized_clone_name();
  std::vector<std::pair<std::string, std::string>> paths;
  paths.emplace_back("batched (prefill) products",
                     apply_tile_wide()      ? "AVX-512 FMA, 12x32 register blocks (8-column "
                                              "tiles: AVX2+FMA, 12x8)"
                     : apply_tile_blocked() ? "AVX2+FMA, 6x16 register blocks"
                                            : portable);
  paths.emplace_back("EXL2 batched (prefill) products",
                     exl2_batched_integer_supported()
                         ? "integers: 16-bit inputs, AVX-512 VNNI, 12x32 register blocks (groups "
                           "of whole 32-row blocks)"
                     : exl2_batched_integer_256_supported()
                         ? "integers: 16-bit inputs, AVX2 vpmaddwd, 6x16 register blocks (groups "
                           "of whole 32-row blocks)"
                         : "float tiles, as the batched products");
  paths.emplace_back("FP16 decode products, 1 to " + std::to_string(kF16FewRows) + " rows",
                     !f16_dots_available() ? portable
                     : wide_vectors_allowed()
                         ? "AVX-512+F16C dot products, one weight row at a time (several "
                           "rows: four weight rows against four inputs in registers)"
                         : "AVX2+FMA+F16C dot products");
  const std::string integers = !exl2_integer_wide_supported() ? "AVX2"
                               : wide_vnni_allowed()          ? "AVX-512 VNNI"
                                                              : "AVX-512BW";
  const std::string few = "1 to " + std::to_string(kExl2FewRows) + " rows";
  paths.emplace_back("EXL2 decode steps, " + few,
                     exl2_integer_supported()
                         ? "integers: 8-bit inputs (2- and 4-bit groups) and 16-bit, " + integers
                         : "float, four rows per pass, " + portable);
  paths.emplace_back("EXL2 prompt products, " + few,
                     wide_vnni_allowed() ? "integers: 16-bit inputs, " + integers
                                         : "float, four rows per pass, " + portable);
  return paths;
}

}  // namespace quire::kernels
