#include "quire/engine/vision/siglip_tower.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "quire/kernels/cpu/linear.h"
#include "vision_ops.h"

namespace quire::engine::vision {
namespace {

using detail::add_in_place;
using detail::layer_norm_rows;
using detail::multiply_by_transposed;

// out = x W^T + b for `rows` rows of x.
void apply(kernels::ThreadPool& pool, const DenseLinear& linear, const std::vector<float>& x,
           std::int64_t rows, std::vector<float>& out) {
  detail::apply_linear(pool, linear, x, rows, out);
}

// The rows of each patch's values in the order the convolution's weight
// flattens them: channel, then row and column inside the patch.
std::vector<float> gather_patches(const SiglipConfig& c, const PixelTensor& pixels) {
  const int p = c.patch_size;
  const int side = c.patches_per_side();
  const std::int64_t width = c.patch_values();
  std::vector<float> patches(std::size_t(c.patches() * width));
  for (int pr = 0; pr < side; ++pr) {
    for (int pc = 0; pc < side; ++pc) {
      float* target = patches.data() + std::int64_t(pr * side + pc) * width;
      for (int ch = 0; ch < c.num_channels; ++ch) {
        for (int i = 0; i < p; ++i) {
          const std::int64_t row = std::int64_t(ch) * pixels.height + pr * p + i;
          const float* source = pixels.values.data() + row * pixels.width + pc * p;
          for (int j = 0; j < p; ++j)
            *target++ = source[j];
        }
      }
    }
  }
  return patches;
}

// Multi-head attention over every patch, no mask; writes into `attended`.
class Attention {
 public:
  explicit Attention(const SiglipConfig& c) : c_(c), rows_(c.patches()), head_dim_(c.head_dim()) {
    head_q_.resize(std::size_t(rows_ * head_dim_));
    head_k_.resize(head_q_.size());
    head_v_t_.resize(head_q_.size());
    head_out_.resize(head_q_.size());
    scores_.resize(std::size_t(rows_ * rows_));
  }

  void run(kernels::ThreadPool& pool, const std::vector<float>& q, const std::vector<float>& k,
           const std::vector<float>& v, std::vector<float>& attended) {
    const std::int64_t width = c_.hidden_size;
    attended.resize(std::size_t(rows_ * width));
    const auto scale = static_cast<float>(1.0 / std::sqrt(double(head_dim_)));
    for (int head = 0; head < c_.num_heads; ++head) {
      const std::int64_t first = std::int64_t(head) * head_dim_;
      for (std::int64_t r = 0; r < rows_; ++r) {
        for (std::int64_t d = 0; d < head_dim_; ++d) {
          const std::size_t from = std::size_t(r * width + first + d);
          head_q_[std::size_t(r * head_dim_ + d)] = q[from];
          head_k_[std::size_t(r * head_dim_ + d)] = k[from];
          head_v_t_[std::size_t(d * rows_ + r)] = v[from];
        }
      }
      multiply_by_transposed(pool, head_q_.data(), rows_, head_k_.data(), rows_, head_dim_,
                             scores_.data());
      detail::scaled_softmax_rows(pool, scores_.data(), rows_, rows_, scale);
      multiply_by_transposed(pool, scores_.data(), rows_, head_v_t_.data(), head_dim_, rows_,
                             head_out_.data());
      for (std::int64_t r = 0; r < rows_; ++r) {
        for (std::int64_t d = 0; d < head_dim_; ++d)
          attended[std::size_t(r * width + first + d)] = head_out_[std::size_t(r * head_dim_ + d)];
      }
    }
  }

 private:
  const SiglipConfig& c_;
  std::int64_t rows_;
  std::int64_t head_dim_;
  std::vector<float> head_q_, head_k_, head_v_t_, head_out_, scores_;
};

}  // namespace

void check_pixels(const SiglipConfig& config, const PixelTensor& pixels) {
  const auto shape = [](std::int64_t c, std::int64_t h, std::int64_t w) {
    return std::to_string(c) + " x " + std::to_string(h) + " x " + std::to_string(w);
  };
  const std::string expected = shape(config.num_channels, config.image_size, config.image_size);
  if (pixels.channels != config.num_channels || pixels.height != config.image_size ||
      pixels.width != config.image_size) {
    throw std::invalid_argument("the vision tower takes " + expected + " pixel values, not " +
                                shape(pixels.channels, pixels.height, pixels.width) +
                                "; preprocess the image with the model's processor first");
  }
  const std::size_t count =
      std::size_t(pixels.channels) * std::size_t(pixels.height) * std::size_t(pixels.width);
  if (pixels.values.size() != count) {
    throw std::invalid_argument("a " + expected + " pixel tensor holds " + std::to_string(count) +
                                " values, not " + std::to_string(pixels.values.size()));
  }
}

std::vector<float> run_siglip_tower(kernels::ThreadPool& pool, const SiglipConfig& c,
                                    const SiglipWeights& weights, const PixelTensor& pixels) {
  check_pixels(c, pixels);
  const std::int64_t rows = c.patches();
  const std::int64_t width = c.hidden_size;
  const double eps = c.layer_norm_eps;

  std::vector<float> x;
  apply(pool, weights.patch_embedding, gather_patches(c, pixels), rows, x);
  add_in_place(pool, x, weights.position_embedding);

  std::vector<float> h(x.size()), q, k, v, attended, projected, inner;
  Attention attention(c);
  for (const SiglipLayerWeights& layer : weights.layers) {
    layer_norm_rows(pool, x.data(), rows, width, layer.norm1, eps, h.data());
    apply(pool, layer.q, h, rows, q);
    apply(pool, layer.k, h, rows, k);
    apply(pool, layer.v, h, rows, v);
    attention.run(pool, q, k, v, attended);
    apply(pool, layer.out, attended, rows, projected);
    add_in_place(pool, x, projected);

    layer_norm_rows(pool, x.data(), rows, width, layer.norm2, eps, h.data());
    apply(pool, layer.fc1, h, rows, inner);
    detail::gelu_in_place(pool, inner, c.activation);
    apply(pool, layer.fc2, inner, rows, projected);
    add_in_place(pool, x, projected);
  }
  std::vector<float> out(x.size());
  layer_norm_rows(pool, x.data(), rows, width, weights.post_norm, eps, out.data());
  return out;
}

}  // namespace quire::engine::vision
