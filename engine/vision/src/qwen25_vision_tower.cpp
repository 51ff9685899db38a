#include "quire/engine/vision/qwen25_vision_tower.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "quire/engine/vision/qwen25_image_scratch.h"
#include "vision_ops.h"

namespace quire::engine::vision {
namespace {

// Qwen2.5-VL's RMSNorms (every block's and the merger's) use this epsilon,
// fixed in the model's code rather than read from config.json.
constexpr double kQwenRmsEps = 1e-6;
constexpr double kQwenRotaryTheta = 10000.0;

// Which patch goes where once the patches are regrouped by window, and the
// spans attention runs over.
struct QwenWindowPlan {
  // Merged tokens (merge blocks) in window order; entry j is the token the
  // j-th block of the regrouped sequence came from (transformers' window_index).
  std::vector<std::int64_t> token_order;
  std::vector<std::int64_t> window_rows;  // patches in each window, in order
  std::vector<std::int64_t> frame_rows;   // patches in each frame
};

QwenWindowPlan plan_qwen_windows(const Qwen25VisionConfig& c, PatchGrid grid) {
  const int m = c.spatial_merge_size;
  const int rows = grid.h / m;
  const int columns = grid.w / m;
  const int side = c.window_tokens();
  // transformers pads the token grid to whole windows and drops the padding;
  // windows that would hold only padding disappear.
  const int down = (rows + side - 1) / side;
  const int across = (columns + side - 1) / side;
  QwenWindowPlan plan;
  for (int t = 0; t < grid.t; ++t) {
    const std::int64_t frame = std::int64_t(t) * rows * columns;
    for (int wr = 0; wr < down; ++wr) {
      for (int wc = 0; wc < across; ++wc) {
        std::int64_t tokens = 0;
        for (int i = wr * side; i < std::min(rows, (wr + 1) * side); ++i) {
          for (int j = wc * side; j < std::min(columns, (wc + 1) * side); ++j) {
            plan.token_order.push_back(frame + std::int64_t(i) * columns + j);
            ++tokens;
          }
        }
        plan.window_rows.push_back(tokens * c.merge_unit());
      }
    }
    plan.frame_rows.push_back(std::int64_t(grid.h) * grid.w);
  }
  return plan;
}

// cos and sin of each regrouped patch's rotary angles, [rows, head_dim] each.
struct RotaryTables {
  std::vector<float> cos, sin;
};

RotaryTables qwen_rotary_tables(const Qwen25VisionConfig& c, PatchGrid grid,
                                const std::vector<std::int64_t>& source_row) {
  const int head_dim = c.head_dim();
  const int quarter = head_dim / 4;  // frequencies per axis
  // transformers keeps inv_freq and the angles in FP32 buffers; so does Quire.
  std::vector<float> inverse_frequency(std::size_t(quarter), 0.0f);
  for (int k = 0; k < quarter; ++k) {
    const double exponent = double(2 * k) / double(head_dim / 2);
    inverse_frequency[std::size_t(k)] =
        static_cast<float>(1.0 / std::pow(kQwenRotaryTheta, exponent));
  }
  const int m = c.spatial_merge_size;
  const std::int64_t frame = std::int64_t(grid.h) * grid.w;
  const int columns = grid.w / m;
  RotaryTables tables;
  tables.cos.resize(source_row.size() * std::size_t(head_dim));
  tables.sin.resize(tables.cos.size());
  for (std::size_t r = 0; r < source_row.size(); ++r) {
    // The processor's order: merge blocks row by row, inside each block m x m patches.
    const std::int64_t in_frame = source_row[r] % frame;
    const std::int64_t block = in_frame / c.merge_unit();
    const std::int64_t inside = in_frame % c.merge_unit();
    const std::int64_t patch_row = (block / columns) * m + inside / m;
    const std::int64_t patch_column = (block % columns) * m + inside % m;
    for (int d = 0; d < head_dim / 2; ++d) {
      const std::int64_t position = d < quarter ? patch_row : patch_column;
      const float angle =
          static_cast<float>(position) * inverse_frequency[std::size_t(d % quarter)];
      const auto cos_value = static_cast<float>(std::cos(double(angle)));
      const auto sin_value = static_cast<float>(std::sin(double(angle)));
      for (const int at : {d, d + head_dim / 2}) {
        tables.cos[r * std::size_t(head_dim) + std::size_t(at)] = cos_value;
        tables.sin[r * std::size_t(head_dim) + std::size_t(at)] = sin_value;
      }
    }
  }
  return tables;
}

// x * cos + rotate_half(x) * sin over one head's `head_dim` values.
void rotate_head(float* x, const float* cos, const float* sin, int head_dim) {
  const int half = head_dim / 2;
  for (int d = 0; d < half; ++d) {
    const float first = x[d];
    const float second = x[d + half];
    x[d] = first * cos[d] - second * sin[d];
    x[d + half] = second * cos[d + half] + first * sin[d + half];
  }
}

// Attention of every head inside each span of rows; q, k and v are columns
// of the fused [rows, 3 * hidden] projection. Queries go kQwenQueryBlock
// rows at a time: a full-attention layer spans a whole frame (65,536
// patches at the default max_pixels), whose scores would otherwise take
// 16 GiB; a block's take 64 MiB (qwen25_image_scratch_bytes prices them).
class SpanAttention {
 public:
  SpanAttention(const Qwen25VisionConfig& c, std::int64_t rows) : c_(c), rows_(rows) {}

  void run(kernels::ThreadPool& pool, const std::vector<float>& qkv,
           const std::vector<std::int64_t>& spans, std::vector<float>& attended) {
    const std::int64_t width = c_.hidden_size;
    const std::int64_t head_dim = c_.head_dim();
    attended.resize(std::size_t(rows_ * width));
    const auto scale = static_cast<float>(1.0 / std::sqrt(double(head_dim)));
    std::int64_t start = 0;
    for (const std::int64_t length : spans) {
      q_.resize(std::size_t(length * head_dim));
      k_.resize(q_.size());
      v_t_.resize(q_.size());
      out_.resize(q_.size());
      const std::int64_t block = std::min(length, kQwenQueryBlock);
      scores_.resize(std::size_t(block * length));
      for (int head = 0; head < c_.num_heads; ++head) {
        const std::int64_t first = std::int64_t(head) * head_dim;
        for (std::int64_t r = 0; r < length; ++r) {
          const float* row = qkv.data() + (start + r) * 3 * width;
          for (std::int64_t d = 0; d < head_dim; ++d) {
            q_[std::size_t(r * head_dim + d)] = row[first + d];
            k_[std::size_t(r * head_dim + d)] = row[width + first + d];
            v_t_[std::size_t(d * length + r)] = row[2 * width + first + d];
          }
        }
        for (std::int64_t from = 0; from < length; from += block) {
          const std::int64_t queries = std::min(block, length - from);
          detail::multiply_by_transposed(pool, q_.data() + from * head_dim, queries, k_.data(),
                                         length, head_dim, scores_.data());
          detail::scaled_softmax_rows(pool, scores_.data(), queries, length, scale);
          detail::multiply_by_transposed(pool, scores_.data(), queries, v_t_.data(), head_dim,
                                         length, out_.data() + from * head_dim);
        }
        for (std::int64_t r = 0; r < length; ++r) {
          for (std::int64_t d = 0; d < head_dim; ++d)
            attended[std::size_t((start + r) * width + first + d)] =
                out_[std::size_t(r * head_dim + d)];
        }
      }
      start += length;
    }
  }

 private:
  const Qwen25VisionConfig& c_;
  std::int64_t rows_;
  std::vector<float> q_, k_, v_t_, out_, scores_;
};

void qwen_activation(kernels::ThreadPool& pool, QwenVisionActivation kind, std::vector<float>& gate,
                     const std::vector<float>& up) {
  if (kind == QwenVisionActivation::Silu) {
    detail::silu_gate_in_place(pool, gate, up);
    return;
  }
  detail::gelu_in_place(pool, gate,
                        kind == QwenVisionActivation::GeluTanh ? Gelu::Tanh : Gelu::Erf);
  detail::multiply_in_place(pool, gate, up);
}

}  // namespace

void check_patch_input(const Qwen25VisionConfig& config, std::span<const float> patches,
                       PatchGrid grid) {
  const int m = config.spatial_merge_size;
  if (grid.t < 1 || grid.h < m || grid.w < m || grid.h % m != 0 || grid.w % m != 0) {
    throw std::invalid_argument(
        "the vision tower takes a grid of whole " + std::to_string(m) + " x " + std::to_string(m) +
        " merge blocks, not grid_thw (" + std::to_string(grid.t) + ", " + std::to_string(grid.h) +
        ", " + std::to_string(grid.w) + "); preprocess the image with the model's processor");
  }
  const std::size_t rows = std::size_t(grid.t) * std::size_t(grid.h) * std::size_t(grid.w);
  const std::size_t expected = rows * std::size_t(config.patch_values());
  if (patches.size() != expected) {
    throw std::invalid_argument(
        "grid_thw (" + std::to_string(grid.t) + ", " + std::to_string(grid.h) + ", " +
        std::to_string(grid.w) + ") is " + std::to_string(rows) + " patches of " +
        std::to_string(config.patch_values()) + " values (" + std::to_string(expected) + "), not " +
        std::to_string(patches.size()) + " values");
  }
}

std::vector<float> run_qwen25_vision(kernels::ThreadPool& pool, const Qwen25VisionConfig& c,
                                     const Qwen25VisionWeights& weights,
                                     std::span<const float> patches, PatchGrid grid) {
  check_patch_input(c, patches, grid);
  const std::int64_t rows = std::int64_t(grid.t) * grid.h * grid.w;
  const std::int64_t width = c.hidden_size;
  const std::int64_t unit = c.merge_unit();
  const int head_dim = c.head_dim();

  // Regroup the patches window by window before anything else: every step
  // but attention works row by row, so only the order matters.
  const QwenWindowPlan plan = plan_qwen_windows(c, grid);
  std::vector<std::int64_t> source_row(static_cast<std::size_t>(rows));
  for (std::size_t j = 0; j < plan.token_order.size(); ++j) {
    for (std::int64_t i = 0; i < unit; ++i)
      source_row[j * std::size_t(unit) + std::size_t(i)] = plan.token_order[j] * unit + i;
  }
  const std::int64_t values = c.patch_values();
  std::vector<float> regrouped(std::size_t(rows * values));
  for (std::int64_t r = 0; r < rows; ++r) {
    std::copy_n(patches.data() + source_row[std::size_t(r)] * values, values,
                regrouped.data() + r * values);
  }
  const RotaryTables rotary = qwen_rotary_tables(c, grid, source_row);

  std::vector<float> x, h(std::size_t(rows * width)), qkv, attended, projected, gate, up;
  detail::apply_linear(pool, weights.patch_embed, regrouped, rows, x);
  SpanAttention attention(c, rows);
  for (std::size_t b = 0; b < weights.blocks.size(); ++b) {
    const Qwen25VisionBlockWeights& block = weights.blocks[b];
    detail::rms_norm_rows(pool, x.data(), rows, width, block.norm1, kQwenRmsEps, h.data());
    detail::apply_linear(pool, block.qkv, h, rows, qkv);
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* cos = rotary.cos.data() + r * head_dim;
      const float* sin = rotary.sin.data() + r * head_dim;
      for (int head = 0; head < c.num_heads; ++head) {
        float* q = qkv.data() + r * 3 * width + std::int64_t(head) * head_dim;
        rotate_head(q, cos, sin, head_dim);
        rotate_head(q + width, cos, sin, head_dim);
      }
    }
    attention.run(pool, qkv, c.full_attention(int(b)) ? plan.frame_rows : plan.window_rows,
                  attended);
    detail::apply_linear(pool, block.proj, attended, rows, projected);
    detail::add_in_place(pool, x, projected);

    detail::rms_norm_rows(pool, x.data(), rows, width, block.norm2, kQwenRmsEps, h.data());
    detail::apply_linear(pool, block.gate, h, rows, gate);
    detail::apply_linear(pool, block.up, h, rows, up);
    qwen_activation(pool, c.activation, gate, up);
    detail::apply_linear(pool, block.down, gate, rows, projected);
    detail::add_in_place(pool, x, projected);
  }

  // The merger: each merge block's rows are consecutive, so [rows, width]
  // read as [rows / unit, unit * width] concatenates them.
  detail::rms_norm_rows(pool, x.data(), rows, width, weights.merger.norm, kQwenRmsEps, h.data());
  const std::int64_t tokens = rows / unit;
  std::vector<float> inner, merged;
  detail::apply_linear(pool, weights.merger.fc1, h, tokens, inner);
  detail::gelu_in_place(pool, inner, Gelu::Erf);
  detail::apply_linear(pool, weights.merger.fc2, inner, tokens, merged);

  const std::int64_t out_width = c.out_hidden_size;
  std::vector<float> out(merged.size());
  for (std::size_t j = 0; j < plan.token_order.size(); ++j) {
    std::copy_n(merged.data() + std::int64_t(j) * out_width, out_width,
                out.data() + plan.token_order[j] * out_width);
  }
  return out;
}

}  // namespace quire::engine::vision
