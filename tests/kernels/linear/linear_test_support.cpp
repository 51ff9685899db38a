#include "linear_test_support.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "quire/kernels/cpu/exl2_scale.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/fp8.h"

namespace quire::test {

Exl2Fixture::Exl2Fixture(const std::vector<std::pair<int, int>>& plan, std::int64_t out,
                         std::int64_t columns)
    : out_features(out), q_columns(columns) {
  int row = 0;
  int q_row = 0;
  for (const auto& [bits, rows] : plan) {
    groups.push_back({bits, rows, row, q_row});
    row += rows;
    q_row += rows * bits / 32;
  }
  in_features = row;
  q_weight.assign(std::size_t(q_row * q_columns), 0u);
  q_scale.assign(groups.size() * std::size_t(q_columns / 8), 0u);
  q_scale_max.assign(groups.size(), kernels::float_to_half(1.0f));
  perm.resize(std::size_t(in_features));
  std::iota(perm.begin(), perm.end(), 0);
}

LinearWeight Exl2Fixture::weight() const {
  LinearWeight weight;
  weight.in_features = in_features;
  weight.out_features = out_features;
  kernels::Exl2Weight exl2;
  exl2.q_weight = q_weight.data();
  exl2.q_scale = q_scale.data();
  exl2.q_scale_max = q_scale_max.data();
  exl2.perm = perm.data();
  exl2.groups = groups;
  exl2.q_columns = q_columns;
  weight.format = exl2;
  return weight;
}

int Exl2Fixture::value(std::int64_t k, std::int64_t n) const {
  for (const kernels::Exl2Group& group : groups) {
    if (k >= group.first_row + group.rows) continue;
    const std::int64_t j = k - group.first_row;
    const std::int64_t bit = (j % 32) * group.bits;
    const std::int64_t word_row = group.q_row + (j / 32) * group.bits + bit / 32;
    std::uint64_t window = q_weight[std::size_t(word_row * q_columns + n)];
    if (bit % 32 + group.bits > 32) {
      window |= std::uint64_t(q_weight[std::size_t((word_row + 1) * q_columns + n)]) << 32;
    }
    return static_cast<int>((window >> (bit % 32)) & ((1u << group.bits) - 1u));
  }
  return -1;
}

float Exl2Fixture::scale(std::size_t group, std::int64_t n) const {
  const std::uint32_t word = q_scale[group * std::size_t(q_columns / 8) + std::size_t(n / 8)];
  // exllamav2's scale, rounded to FP16.
  return kernels::exl2_scale(static_cast<int>((word >> (4 * (n % 8))) & 15u) + 1,
                             q_scale_max[group]);
}

Exl2Fixture random_exl2(std::mt19937& rng, const std::vector<std::pair<int, int>>& plan,
                        std::int64_t out_features, std::int64_t q_columns, bool shuffle) {
  Exl2Fixture fixture(plan, out_features, q_columns);
  for (std::uint32_t& word : fixture.q_weight)
    word = static_cast<std::uint32_t>(rng());
  for (std::uint32_t& word : fixture.q_scale)
    word = static_cast<std::uint32_t>(rng());
  std::uniform_real_distribution<float> maxima(0.002f, 0.05f);
  for (std::uint16_t& max : fixture.q_scale_max)
    max = kernels::float_to_half(maxima(rng));
  if (shuffle) std::shuffle(fixture.perm.begin(), fixture.perm.end(), rng);
  return fixture;
}

LinearWeight GptqFixture::weight() const {
  LinearWeight weight;
  weight.in_features = in_features;
  weight.out_features = out_features;
  kernels::GptqWeight gptq;
  gptq.qweight = qweight.data();
  gptq.qzeros = qzeros.empty() ? nullptr : qzeros.data();
  gptq.scales = scale_dtype == kernels::DType::F32 ? static_cast<const void*>(scales32.data())
                                                   : static_cast<const void*>(scales.data());
  gptq.scale_dtype = scale_dtype;
  gptq.bits = bits;
  gptq.g_idx = g_idx.empty() ? nullptr : g_idx.data();
  gptq.groups = groups;
  gptq.group_size = group_size;
  gptq.exact_zeros = exact_zeros;
  weight.format = gptq;
  return weight;
}

GptqFixture random_gptq(std::mt19937& rng, std::int64_t in_features, std::int64_t out_features,
                        int group_size, bool act_order, bool exact_zeros,
                        const GptqVariant& variant) {
  GptqFixture fixture;
  fixture.in_features = in_features;
  fixture.out_features = out_features;
  fixture.group_size = group_size;
  fixture.groups = static_cast<int>((in_features + group_size - 1) / group_size);
  fixture.exact_zeros = exact_zeros;
  fixture.bits = variant.bits;
  fixture.scale_dtype = variant.scale_dtype;
  fixture.qweight.resize(std::size_t(in_features * variant.bits / 32 * out_features));
  for (std::uint32_t& word : fixture.qweight)
    word = static_cast<std::uint32_t>(rng());
  if (!variant.symmetric) {
    fixture.qzeros.resize(std::size_t(fixture.groups * out_features * variant.bits / 32));
    for (std::uint32_t& word : fixture.qzeros)
      word = static_cast<std::uint32_t>(rng());
  }
  // Smaller steps for 8 bits, so that weights keep about the same range.
  const float top = variant.bits == 8 ? 0.0015f : 0.02f;
  std::uniform_real_distribution<float> scales(top / 20.0f, top);
  const auto count = std::size_t(fixture.groups * out_features);
  for (std::size_t i = 0; i < count; ++i) {
    const float scale = scales(rng);
    if (variant.scale_dtype == kernels::DType::F32) {
      fixture.scales32.push_back(scale);
    } else {
      fixture.scales.push_back(variant.scale_dtype == kernels::DType::BF16
                                   ? kernels::float_to_bf16(scale)
                                   : kernels::float_to_half(scale));
    }
  }
  if (act_order) {
    // As GPTQ writes it: rows taken in a shuffled order fill the groups in turn.
    std::vector<std::int32_t> order(static_cast<std::size_t>(in_features));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    fixture.g_idx.resize(std::size_t(in_features));
    for (std::size_t i = 0; i < order.size(); ++i) {
      fixture.g_idx[std::size_t(order[i])] = static_cast<std::int32_t>(i / std::size_t(group_size));
    }
  }
  return fixture;
}

void make_fp8_layer(Layer& layer, std::mt19937& rng, std::int64_t out, std::int64_t in,
                    bool per_row) {
  const std::vector<float> values = random_inputs(rng, std::size_t(out * in));
  layer.fp8_scales.assign(std::size_t(out), 1.0f / kernels::kE4m3Max);
  for (std::int64_t n = 0; n < out && per_row; ++n) {
    float largest = 0.0f;
    for (std::int64_t k = 0; k < in; ++k)
      largest = std::max(largest, std::fabs(values[std::size_t(n * in + k)]) * float(n + 1));
    layer.fp8_scales[std::size_t(n)] = largest / kernels::kE4m3Max;
  }
  layer.fp8.clear();
  for (std::int64_t n = 0; n < out; ++n) {
    // Rows of growing size, so that their scales differ.
    const float row_size = per_row ? float(n + 1) : 1.0f;
    for (std::int64_t k = 0; k < in; ++k) {
      layer.fp8.push_back(kernels::float_to_e4m3(values[std::size_t(n * in + k)] * row_size /
                                                 layer.fp8_scales[std::size_t(n)]));
    }
  }
  layer.weight.in_features = in;
  layer.weight.out_features = out;
  layer.weight.format = kernels::Fp8Weight{layer.fp8.data(), layer.fp8_scales.data()};
}

std::vector<float> random_inputs(std::mt19937& rng, std::size_t count) {
  std::uniform_real_distribution<float> magnitude(0.05f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> values(count);
  for (float& value : values)
    value = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return values;
}

Reference reference_product(const std::vector<float>& x, std::int64_t rows,
                            const std::vector<float>& dense, std::int64_t out_features,
                            std::int64_t in_features, const std::vector<float>& bias) {
  Reference reference;
  reference.values.resize(std::size_t(rows * out_features));
  reference.magnitudes.resize(reference.values.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t n = 0; n < out_features; ++n) {
      double sum = bias.empty() ? 0.0 : double(bias[std::size_t(n)]);
      double magnitude = std::fabs(sum);
      for (std::int64_t k = 0; k < in_features; ++k) {
        const double term =
            double(x[std::size_t(r * in_features + k)]) * dense[std::size_t(n * in_features + k)];
        sum += term;
        magnitude += std::fabs(term);
      }
      reference.values[std::size_t(r * out_features + n)] = sum;
      reference.magnitudes[std::size_t(r * out_features + n)] = magnitude;
    }
  }
  return reference;
}

void add_bias(Layer& layer, const QByteArray& type, std::mt19937& rng) {
  if (type == "none") return;
  const std::vector<float> values = random_inputs(rng, std::size_t(layer.weight.out_features));
  if (type == "f32") {
    layer.bias32 = values;
    layer.bias = values;
    layer.weight.bias = layer.bias32.data();
    layer.weight.bias_dtype = kernels::DType::F32;
    return;
  }
  const bool bf16 = type == "bf16";
  for (const float v : values) {
    layer.bias16.push_back(bf16 ? kernels::float_to_bf16(v) : kernels::float_to_half(v));
    layer.bias.push_back(bf16 ? kernels::bf16_to_float(layer.bias16.back())
                              : kernels::half_to_float(layer.bias16.back()));
  }
  layer.weight.bias = layer.bias16.data();
  layer.weight.bias_dtype = bf16 ? kernels::DType::BF16 : kernels::DType::F16;
}

}  // namespace quire::test
