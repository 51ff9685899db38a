#include "vision_ops.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "quire/kernels/cpu/linear.h"

namespace quire::engine::vision::detail {
namespace {

// Elements per chunk of the element-wise loops; rows per chunk come from
// the row width so that every chunk is worth a thread.
constexpr std::int64_t kElementGrain = 1 << 14;

std::int64_t row_grain(std::int64_t width) {
  return std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(1, width));
}

float gelu_tanh(float x) {
  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), as torch's approximate="tanh".
  constexpr float kRoot = static_cast<float>(0.7978845608028654);  // sqrt(2 / pi)
  return 0.5f * x * (1.0f + std::tanh(kRoot * (x + 0.044715f * x * x * x)));
}

float gelu_erf(float x) {
  return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(std::numbers::sqrt2 / 2.0)));
}

}  // namespace

void apply_linear(kernels::ThreadPool& pool, const DenseLinear& linear, const std::vector<float>& x,
                  std::int64_t rows, std::vector<float>& out) {
  out.resize(std::size_t(rows * linear.out_features));
  kernels::linear(pool, x.data(), rows, linear.view(), out.data());
}

void multiply_by_transposed(kernels::ThreadPool& pool, const float* x, std::int64_t rows,
                            const float* m, std::int64_t n, std::int64_t k, float* out) {
  kernels::LinearWeight weight;
  weight.in_features = k;
  weight.out_features = n;
  weight.format = kernels::DenseWeight{m, kernels::DType::F32};
  kernels::linear(pool, x, rows, weight, out);
}

void rms_norm_rows(kernels::ThreadPool& pool, const float* x, std::int64_t rows, std::int64_t width,
                   const std::vector<float>& weight, double eps, float* out) {
  pool.parallel_for(rows, row_grain(width), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* row = x + r * width;
      double squares = 0.0;
      for (std::int64_t i = 0; i < width; ++i)
        squares += double(row[i]) * row[i];
      const double inverse = 1.0 / std::sqrt(squares / double(width) + eps);
      float* target = out + r * width;
      for (std::int64_t i = 0; i < width; ++i)
        target[i] = static_cast<float>(row[i] * inverse) * weight[std::size_t(i)];
    }
  });
}

void silu_gate_in_place(kernels::ThreadPool& pool, std::span<float> gate,
                        std::span<const float> up) {
  pool.parallel_for(std::int64_t(gate.size()), kElementGrain,
                    [&](std::int64_t begin, std::int64_t end) {
                      for (std::int64_t i = begin; i < end; ++i) {
                        float& value = gate[std::size_t(i)];
                        value = value / (1.0f + std::exp(-value)) * up[std::size_t(i)];
                      }
                    });
}

void multiply_in_place(kernels::ThreadPool& pool, std::span<float> x, std::span<const float> y) {
  pool.parallel_for(std::int64_t(x.size()), kElementGrain,
                    [&](std::int64_t begin, std::int64_t end) {
                      for (std::int64_t i = begin; i < end; ++i)
                        x[std::size_t(i)] *= y[std::size_t(i)];
                    });
}

void layer_norm_rows(kernels::ThreadPool& pool, const float* x, std::int64_t rows,
                     std::int64_t width, const LayerNormWeights& norm, double eps, float* out) {
  pool.parallel_for(rows, row_grain(width), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* row = x + r * width;
      double sum = 0.0;
      for (std::int64_t i = 0; i < width; ++i)
        sum += row[i];
      const double mean = sum / double(width);
      double squares = 0.0;
      for (std::int64_t i = 0; i < width; ++i)
        squares += (row[i] - mean) * (row[i] - mean);
      const double inverse = 1.0 / std::sqrt(squares / double(width) + eps);
      float* target = out + r * width;
      for (std::int64_t i = 0; i < width; ++i) {
        const auto normed = static_cast<float>((row[i] - mean) * inverse);
        target[i] = normed * norm.weight[std::size_t(i)] + norm.bias[std::size_t(i)];
      }
    }
  });
}

void gelu_in_place(kernels::ThreadPool& pool, std::span<float> x, Gelu kind) {
  pool.parallel_for(std::int64_t(x.size()), kElementGrain,
                    [&](std::int64_t begin, std::int64_t end) {
                      for (std::int64_t i = begin; i < end; ++i) {
                        float& value = x[std::size_t(i)];
                        value = kind == Gelu::Tanh ? gelu_tanh(value) : gelu_erf(value);
                      }
                    });
}

void scaled_softmax_rows(kernels::ThreadPool& pool, float* scores, std::int64_t rows,
                         std::int64_t width, float scale) {
  pool.parallel_for(rows, row_grain(width), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      float* row = scores + r * width;
      float top = -INFINITY;
      for (std::int64_t i = 0; i < width; ++i) {
        row[i] *= scale;
        top = std::max(top, row[i]);
      }
      double sum = 0.0;
      for (std::int64_t i = 0; i < width; ++i) {
        row[i] = std::exp(row[i] - top);
        sum += row[i];
      }
      const auto inverse = static_cast<float>(1.0 / sum);
      for (std::int64_t i = 0; i < width; ++i)
        row[i] *= inverse;
    }
  });
}

void add_in_place(kernels::ThreadPool& pool, std::span<float> x, std::span<const float> y) {
  pool.parallel_for(std::int64_t(x.size()), kElementGrain,
                    [&](std::int64_t begin, std::int64_t end) {
                      for (std::int64_t i = begin; i < end; ++i)
                        x[std::size_t(i)] += y[std::size_t(i)];
                    });
}

}  // namespace quire::engine::vision::detail
