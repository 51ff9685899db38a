#include "pixtral_ops.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace quire::engine::vision::detail {
namespace {

constexpr std::int64_t kPixtralGrain = 1 << 14;

std::int64_t rows_per_chunk(std::int64_t width) {
  return std::max<std::int64_t>(1, kPixtralGrain / std::max<std::int64_t>(1, width));
}

float activate(float x, GateActivation kind) {
  switch (kind) {
    case GateActivation::Silu:
      return x / (1.0f + std::exp(-x));
    case GateActivation::GeluErf:
      return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(std::numbers::sqrt2 / 2.0)));
    case GateActivation::GeluTanh: {
      constexpr auto kRoot = static_cast<float>(0.7978845608028654);  // sqrt(2 / pi)
      return 0.5f * x * (1.0f + std::tanh(kRoot * (x + 0.044715f * x * x * x)));
    }
  }
  return x;
}

}  // namespace

void rms_norm_rows(kernels::ThreadPool& pool, const float* x, std::int64_t rows, std::int64_t width,
                   std::span<const float> weight, double eps, float* out) {
  pool.parallel_for(rows, rows_per_chunk(width), [&](std::int64_t begin, std::int64_t end) {
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

void gated_activation_in_place(kernels::ThreadPool& pool, std::span<float> gate,
                               std::span<const float> up, GateActivation kind) {
  pool.parallel_for(std::int64_t(gate.size()), kPixtralGrain,
                    [&](std::int64_t begin, std::int64_t end) {
                      for (std::int64_t i = begin; i < end; ++i) {
                        float& value = gate[std::size_t(i)];
                        value = activate(value, kind) * up[std::size_t(i)];
                      }
                    });
}

PixtralRotary::PixtralRotary(const PixtralConfig& config, int grid_height, int grid_width)
    : head_dim_(config.head_dim()), rows_(std::int64_t(grid_height) * grid_width) {
  const int half = head_dim_ / 2;
  // freqs[k] = theta^(-2k / head_dim); freqs[::2] go with the row, freqs[1::2]
  // with the column.
  std::vector<double> frequencies(static_cast<std::size_t>(half));
  for (int k = 0; k < half; ++k)
    frequencies[std::size_t(k)] = 1.0 / std::pow(config.rope_theta, 2.0 * k / head_dim_);
  const int row_part = (half + 1) / 2;
  cos_.resize(std::size_t(rows_ * head_dim_));
  sin_.resize(cos_.size());
  for (int r = 0; r < grid_height; ++r) {
    for (int c = 0; c < grid_width; ++c) {
      const std::int64_t patch = std::int64_t(r) * grid_width + c;
      float* cos_row = cos_.data() + patch * head_dim_;
      float* sin_row = sin_.data() + patch * head_dim_;
      for (int d = 0; d < half; ++d) {
        const double angle = d < row_part ? r * frequencies[std::size_t(2 * d)]
                                          : c * frequencies[std::size_t(2 * (d - row_part) + 1)];
        cos_row[d] = cos_row[d + half] = static_cast<float>(std::cos(angle));
        sin_row[d] = sin_row[d + half] = static_cast<float>(std::sin(angle));
      }
    }
  }
}

void PixtralRotary::apply(kernels::ThreadPool& pool, std::vector<float>& x) const {
  const std::int64_t width = std::int64_t(x.size()) / rows_;
  const int half = head_dim_ / 2;
  pool.parallel_for(rows_, rows_per_chunk(width), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* cos_row = cos_.data() + r * head_dim_;
      const float* sin_row = sin_.data() + r * head_dim_;
      for (std::int64_t head = 0; head < width; head += head_dim_) {
        float* v = x.data() + r * width + head;
        // x * cos + rotate_half(x) * sin, rotate_half(x) = (-x2, x1).
        for (int d = 0; d < half; ++d) {
          const float first = v[d];
          const float second = v[d + half];
          v[d] = first * cos_row[d] - second * sin_row[d];
          v[d + half] = second * cos_row[d + half] + first * sin_row[d + half];
        }
      }
    }
  });
}

}  // namespace quire::engine::vision::detail
