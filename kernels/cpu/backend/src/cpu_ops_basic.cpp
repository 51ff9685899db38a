// Elementwise and row-wise ops of the CPU backend: embedding, RMSNorm, RoPE,
// gated activations, residual adds, soft-capping and scaling, the dispatch of
// matrix products, and the candidates for sampling (top_logits.h).

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"

namespace quire::kernels {
namespace {

// Widens `count` elements of a dense FP16/BF16/F32 vector to FP32.
void widen(const void* data, DType type, std::int64_t offset, std::int64_t count, float* out) {
  switch (type) {
    case DType::F32: {
      const float* source = static_cast<const float*>(data) + offset;
      for (std::int64_t i = 0; i < count; ++i)
        out[i] = source[i];
      return;
    }
    case DType::F16: {
      const std::uint16_t* source = static_cast<const std::uint16_t*>(data) + offset;
      for (std::int64_t i = 0; i < count; ++i)
        out[i] = half_to_float(source[i]);
      return;
    }
    case DType::BF16: {
      const std::uint16_t* source = static_cast<const std::uint16_t*>(data) + offset;
      for (std::int64_t i = 0; i < count; ++i)
        out[i] = bf16_to_float(source[i]);
      return;
    }
    default:
      throw std::invalid_argument("dense weights must be F16, BF16 or F32, not " +
                                  std::string(dtype_name(type)));
  }
}

// Rows per parallel chunk so each holds roughly 16K elements of work.
std::int64_t grain_for(std::int64_t cols) {
  return std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(cols, 1));
}

// gelu_pytorch_tanh's constants: sqrt(2 / pi) and the cubic term's weight.
constexpr float kSqrt2OverPi = 0.797884560802865355f;
constexpr float kGeluCubic = 0.044715f;

void check_soft_cap(float cap) {
  if (!(cap > 0.0f && std::isfinite(cap))) {
    throw std::invalid_argument("a soft cap must be positive, not " + std::to_string(cap));
  }
}

}  // namespace

void CpuBackend::embedding(int device, const DenseWeight& table, std::int64_t vocab,
                           std::int64_t hidden, const std::int32_t* tokens, std::int64_t count,
                           float* out) {
  check_device(device);
  for (std::int64_t t = 0; t < count; ++t) {
    if (tokens[t] < 0 || tokens[t] >= vocab) {
      throw std::invalid_argument("token id " + std::to_string(tokens[t]) +
                                  " lies outside the model's vocabulary of " +
                                  std::to_string(vocab));
    }
  }
  pool_.parallel_for(count, grain_for(hidden), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      widen(table.data, table.dtype, std::int64_t{tokens[t]} * hidden, hidden, out + t * hidden);
    }
  });
}

void CpuBackend::rms_norm(int device, const float* x, const DenseWeight& weight, float eps,
                          std::int64_t rows, std::int64_t cols, float* out) {
  check_device(device);
  std::vector<float> gamma(static_cast<std::size_t>(cols));
  widen(weight.data, weight.dtype, 0, cols, gamma.data());
  pool_.parallel_for(rows, grain_for(cols), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* row = x + r * cols;
      double sum = 0.0;
      for (std::int64_t c = 0; c < cols; ++c)
        sum += double(row[c]) * row[c];
      // As Hugging Face: normalize in FP32, then scale by the weight.
      const float inverse = 1.0f / std::sqrt(static_cast<float>(sum / double(cols)) + eps);
      float* target = out + r * cols;
      for (std::int64_t c = 0; c < cols; ++c)
        target[c] = gamma[std::size_t(c)] * (row[c] * inverse);
    }
  });
}

void CpuBackend::linear(int device, const float* x, std::int64_t rows, const LinearWeight& weight,
                        float* out, ProductRows kind) {
  check_device(device);
  kernels::linear(pool_, x, rows, weight, out, exact_decode_ ? ProductRows::prompt : kind);
}

std::int64_t CpuBackend::invariant_decode_rows() const {
  return kInvariantDecodeRows;
}

void CpuBackend::linear_many(int device, const float* x, std::int64_t rows,
                             std::span<const LinearWeight* const> weights,
                             std::span<float* const> outs, ProductRows kind) {
  check_device(device);
  kernels::linear_many(pool_, x, rows, weights, outs, exact_decode_ ? ProductRows::prompt : kind);
}

void CpuBackend::rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
                      const std::int32_t* positions, const RopeParams& rope) {
  check_device(device);
  check_rope(rope, head_dim);
  const int half = rope.rotary_dim / 2;
  // With M-RoPE each token brings three ids and each frequency its axis.
  const bool multimodal = rope.multimodal();
  std::vector<int> axes(static_cast<std::size_t>(half), 0);
  for (int i = 0; i < half; ++i)
    axes[std::size_t(i)] = rope_axis(rope, i);
  pool_.parallel_for(tokens, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> cosine(static_cast<std::size_t>(half)), sine(static_cast<std::size_t>(half));
    for (std::int64_t t = begin; t < end; ++t) {
      for (int i = 0; i < half; ++i) {
        // Angles in FP32 as Hugging Face computes them (position * inv_freq).
        const float position = multimodal
                                   ? static_cast<float>(positions[3 * t + axes[std::size_t(i)]])
                                   : static_cast<float>(positions[t]);
        const float angle = position * rope.inv_freq[i];
        cosine[std::size_t(i)] =
            static_cast<float>(std::cos(double(angle))) * rope.attention_factor;
        sine[std::size_t(i)] = static_cast<float>(std::sin(double(angle))) * rope.attention_factor;
      }
      for (int h = 0; h < heads; ++h) {
        float* v = x + (t * heads + h) * head_dim;
        for (int i = 0; i < half; ++i) {
          const float a = v[i], b = v[i + half];
          v[i] = a * cosine[std::size_t(i)] - b * sine[std::size_t(i)];
          v[i + half] = b * cosine[std::size_t(i)] + a * sine[std::size_t(i)];
        }
      }
    }
  });
}

void CpuBackend::gated_activation(int device, GatedActivation activation, const float* gate,
                                  const float* up, std::int64_t count, float* out) {
  check_device(device);
  switch (activation) {
    case GatedActivation::Silu:
      pool_.parallel_for(count, 16384, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
        }
      });
      return;
    case GatedActivation::GeluTanh:
      // 0.5 x (1 + tanh(u)) is x sigmoid(2u) = x / (1 + e^-2u): the same
      // function, but where x is very negative 1 + tanh(u) cancels to a few
      // units of 2^-24 (or to 0) in FP32, and the quotient keeps its
      // relative precision. Past FP32's range e^-2u is infinite, and x / inf
      // the 0 the function tends to.
      pool_.parallel_for(count, 16384, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          const float x = gate[i];
          const float u = kSqrt2OverPi * (x + kGeluCubic * (x * x * x));
          out[i] = x / (1.0f + std::exp(-2.0f * u)) * up[i];
        }
      });
      return;
  }
  throw std::invalid_argument("unknown gated activation " +
                              std::to_string(static_cast<int>(activation)));
}

void CpuBackend::add(int device, float* x, const float* y, std::int64_t count) {
  check_device(device);
  pool_.parallel_for(count, 16384, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      x[i] += y[i];
  });
}

void CpuBackend::soft_cap(int device, float* x, std::int64_t count, float cap) {
  check_device(device);
  check_soft_cap(cap);
  pool_.parallel_for(count, 16384, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      x[i] = cap * std::tanh(x[i] / cap);
  });
}

void CpuBackend::scale(int device, float* x, std::int64_t count, float factor) {
  check_device(device);
  pool_.parallel_for(count, 16384, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      x[i] *= factor;
  });
}

void CpuBackend::top_logits(int device, const float* logits, std::int64_t rows, std::int64_t vocab,
                            int k, const float* inv_temperatures, float* values, std::int32_t* ids,
                            TopLogitsStats* stats) {
  check_device(device);
  check_top_logits(rows, vocab, k);
  pool_.parallel_for(rows, 1, [&](std::int64_t begin, std::int64_t end) {
    top_logits_host(logits + begin * vocab, end - begin, vocab, k, inv_temperatures + begin,
                    values + begin * k, ids + begin * k, stats + begin);
  });
}

void CpuBackend::gather_logits(int device, const float* logits, std::int64_t row_count,
                               std::int64_t vocab, const std::int32_t* rows,
                               const std::int32_t* ids, std::int64_t count, float* out) {
  check_device(device);
  gather_logits_host(logits, row_count, vocab, rows, ids, count, out);
}

}  // namespace quire::kernels
