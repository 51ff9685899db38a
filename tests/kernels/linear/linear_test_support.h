#pragma once

// Random and hand-built weights for the linear tests, owning their tensors.

#include <QByteArray>
#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "quire/kernels/linear_weight.h"

namespace quire::test {

using kernels::LinearWeight;

// An EXL2 layer whose tensors live in this object.
struct Exl2Fixture {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  std::int64_t q_columns = 0;
  std::vector<kernels::Exl2Group> groups;
  std::vector<std::uint32_t> q_weight;
  std::vector<std::uint32_t> q_scale;
  std::vector<std::uint16_t> q_scale_max;
  std::vector<std::int32_t> perm;

  // Builds the groups from (bits, rows) and sizes the tensors with zeros.
  Exl2Fixture(const std::vector<std::pair<int, int>>& plan, std::int64_t out_features,
              std::int64_t q_columns);
  LinearWeight weight() const;
  // The stored integer of quantized row k, column n, read with a 64-bit window
  // (a decoder of its own, independent of the library's).
  int value(std::int64_t k, std::int64_t n) const;
  float scale(std::size_t group, std::int64_t n) const;
};

// Random words, scales, maxima and (optionally) a shuffled permutation.
Exl2Fixture random_exl2(std::mt19937& rng, const std::vector<std::pair<int, int>>& plan,
                        std::int64_t out_features, std::int64_t q_columns, bool shuffle);

struct GptqFixture {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  int group_size = 0;
  int groups = 0;
  bool exact_zeros = false;
  int bits = 4;
  std::vector<std::uint32_t> qweight;
  std::vector<std::uint32_t> qzeros;  // empty: symmetric, no zero points stored
  kernels::DType scale_dtype = kernels::DType::F16;
  std::vector<std::uint16_t> scales;  // F16 or BF16
  std::vector<float> scales32;        // F32
  std::vector<std::int32_t> g_idx;    // empty: k / group_size

  LinearWeight weight() const;
};

// The variations of GPTQ's layout that the formats Quire repacks into it use.
struct GptqVariant {
  int bits = 4;
  bool symmetric = false;  // no qzeros
  kernels::DType scale_dtype = kernels::DType::F16;
};

GptqFixture random_gptq(std::mt19937& rng, std::int64_t in_features, std::int64_t out_features,
                        int group_size, bool act_order, bool exact_zeros,
                        const GptqVariant& variant = {});

// A layer of one of the formats under test in host memory, owning its
// tensors; its weight points into them.
struct Layer {
  std::vector<std::uint16_t> halves;
  std::vector<float> floats;
  std::optional<Exl2Fixture> exl2;
  std::optional<GptqFixture> gptq;
  std::vector<std::uint8_t> fp8;  // E4M3 codes, [N, K]
  std::vector<float> fp8_scales;  // [N]
  std::vector<std::uint16_t> bias16;
  std::vector<float> bias32;
  std::vector<float> bias;  // the bias as the reference adds it
  LinearWeight weight;
};

// Makes `layer` an FP8 layer as llm-compressor quantizes one: random values
// whose rows grow with n, each row scaled so that its largest magnitude is
// E4M3's largest value (per_row), or one scale for the tensor.
void make_fp8_layer(Layer& layer, std::mt19937& rng, std::int64_t out_features,
                    std::int64_t in_features, bool per_row);

// Gives the layer a random bias of `type` ("none", "f16", "bf16", "f32").
void add_bias(Layer& layer, const QByteArray& type, std::mt19937& rng);

// Values in [-1, -0.05] and [0.05, 1]: never zero.
std::vector<float> random_inputs(std::mt19937& rng, std::size_t count);

// out[r, n] = sum_k x[r, k] w[n, k] + bias[n] in double precision, and the
// scale of its rounding error: sum_k |x[r, k] w[n, k]| + |bias[n]|.
struct Reference {
  std::vector<double> values;
  std::vector<double> magnitudes;
};
Reference reference_product(const std::vector<float>& x, std::int64_t rows,
                            const std::vector<float>& dense, std::int64_t out_features,
                            std::int64_t in_features, const std::vector<float>& bias);

}  // namespace quire::test
