#include "quire/engine/vision/pixtral_tower.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "pixtral_ops.h"
#include "quire/kernels/cpu/linear.h"
#include "vision_ops.h"

namespace quire::engine::vision {
namespace {

// out = x W^T (+ b) for `rows` rows of x.
void run_linear(kernels::ThreadPool& pool, const DenseLinear& linear, const std::vector<float>& x,
                std::int64_t rows, std::vector<float>& out) {
  out.resize(std::size_t(rows * linear.out_features));
  kernels::linear(pool, x.data(), rows, linear.view(), out.data());
}

// out[rows, n] = x[rows, k] m^T for an activation m [n, k] row-major FP32.
void times_transposed(kernels::ThreadPool& pool, const float* x, std::int64_t rows,
                      const std::vector<float>& m, std::int64_t n, std::int64_t k, float* out) {
  kernels::LinearWeight weight;
  weight.in_features = k;
  weight.out_features = n;
  weight.format = kernels::DenseWeight{m.data(), kernels::DType::F32};
  kernels::linear(pool, x, rows, weight, out);
}

// Each patch's values in the order the convolution's weight flattens them:
// channel, then row and column inside the patch; patches in reading order.
std::vector<float> patches_of(const PixtralConfig& c, const PixelTensor& pixels) {
  const int p = c.patch_size;
  const int grid_h = pixels.height / p;
  const int grid_w = pixels.width / p;
  const std::int64_t width = c.patch_values();
  std::vector<float> patches(std::size_t(std::int64_t(grid_h) * grid_w * width));
  float* target = patches.data();
  for (int pr = 0; pr < grid_h; ++pr) {
    for (int pc = 0; pc < grid_w; ++pc) {
      for (int ch = 0; ch < c.num_channels; ++ch) {
        for (int i = 0; i < p; ++i) {
          const std::int64_t row = std::int64_t(ch) * pixels.height + std::int64_t(pr) * p + i;
          const float* source = pixels.values.data() + row * pixels.width + std::int64_t(pc) * p;
          for (int j = 0; j < p; ++j)
            *target++ = source[j];
        }
      }
    }
  }
  return patches;
}

// Multi-head attention among all of one image's patches, no mask, scaled by
// head_dim^-1/2; q and k already rotated.
class PatchAttention {
 public:
  PatchAttention(const PixtralConfig& c, std::int64_t rows)
      : heads_(c.num_heads), head_dim_(c.head_dim()), rows_(rows) {
    head_q_.resize(std::size_t(rows_ * head_dim_));
    head_k_.resize(head_q_.size());
    head_v_t_.resize(head_q_.size());
    head_out_.resize(head_q_.size());
    scores_.resize(std::size_t(rows_ * rows_));
  }

  void run(kernels::ThreadPool& pool, const std::vector<float>& q, const std::vector<float>& k,
           const std::vector<float>& v, std::vector<float>& attended) {
    const std::int64_t width = std::int64_t(heads_) * head_dim_;
    attended.resize(std::size_t(rows_ * width));
    const auto scale = static_cast<float>(1.0 / std::sqrt(double(head_dim_)));
    for (int head = 0; head < heads_; ++head) {
      const std::int64_t first = std::int64_t(head) * head_dim_;
      for (std::int64_t r = 0; r < rows_; ++r) {
        for (std::int64_t d = 0; d < head_dim_; ++d) {
          const std::size_t from = std::size_t(r * width + first + d);
          head_q_[std::size_t(r * head_dim_ + d)] = q[from];
          head_k_[std::size_t(r * head_dim_ + d)] = k[from];
          head_v_t_[std::size_t(d * rows_ + r)] = v[from];
        }
      }
      times_transposed(pool, head_q_.data(), rows_, head_k_, rows_, head_dim_, scores_.data());
      detail::scaled_softmax_rows(pool, scores_.data(), rows_, rows_, scale);
      times_transposed(pool, scores_.data(), rows_, head_v_t_, head_dim_, rows_, head_out_.data());
      for (std::int64_t r = 0; r < rows_; ++r) {
        for (std::int64_t d = 0; d < head_dim_; ++d)
          attended[std::size_t(r * width + first + d)] = head_out_[std::size_t(r * head_dim_ + d)];
      }
    }
  }

 private:
  int heads_;
  std::int64_t head_dim_;
  std::int64_t rows_;
  std::vector<float> head_q_, head_k_, head_v_t_, head_out_, scores_;
};

std::string pixel_shape(std::int64_t c, std::int64_t h, std::int64_t w) {
  return std::to_string(c) + " x " + std::to_string(h) + " x " + std::to_string(w);
}

}  // namespace

void check_pixtral_pixels(const Mistral3VisionConfig& config, const PixelTensor& pixels) {
  const PixtralConfig& c = config.tower;
  const int step = config.token_pixels();
  const std::string given = pixel_shape(pixels.channels, pixels.height, pixels.width);
  if (pixels.channels != c.num_channels) {
    throw std::invalid_argument("the Pixtral tower takes " + std::to_string(c.num_channels) +
                                " channels, not the " + std::to_string(pixels.channels) + " of a " +
                                given + " pixel tensor");
  }
  const std::pair<int, const char*> sides[] = {{pixels.height, "height"}, {pixels.width, "width"}};
  for (const auto& [side, name] : sides) {
    if (side <= 0 || side % step != 0 || side > c.image_size) {
      throw std::invalid_argument(
          std::string("the Pixtral tower takes images whose height and width are multiples of ") +
          std::to_string(step) + " (patch_size " + std::to_string(c.patch_size) +
          " x spatial_merge_size " + std::to_string(config.spatial_merge_size) + ") up to " +
          std::to_string(c.image_size) + " pixels; the " + given + " pixel tensor's " + name +
          " is not; preprocess the image with the model's processor first");
    }
  }
  const std::size_t count =
      std::size_t(pixels.channels) * std::size_t(pixels.height) * std::size_t(pixels.width);
  if (pixels.values.size() != count) {
    throw std::invalid_argument("a " + given + " pixel tensor holds " + std::to_string(count) +
                                " values, not " + std::to_string(pixels.values.size()));
  }
}

std::vector<float> run_pixtral_tower(kernels::ThreadPool& pool, const Mistral3VisionConfig& config,
                                     const PixtralWeights& weights, const PixelTensor& pixels) {
  check_pixtral_pixels(config, pixels);
  const PixtralConfig& c = config.tower;
  const int grid_h = pixels.height / c.patch_size;
  const int grid_w = pixels.width / c.patch_size;
  const std::int64_t rows = std::int64_t(grid_h) * grid_w;
  const std::int64_t width = c.hidden_size;

  std::vector<float> embedded;
  run_linear(pool, weights.patch_conv, patches_of(c, pixels), rows, embedded);
  std::vector<float> x(embedded.size());
  detail::rms_norm_rows(pool, embedded.data(), rows, width, weights.ln_pre, kPixtralNormEps,
                        x.data());

  const detail::PixtralRotary rotary(c, grid_h, grid_w);
  PatchAttention attention(c, rows);
  std::vector<float> h(x.size()), q, k, v, attended, projected, gate, up;
  for (const PixtralLayerWeights& layer : weights.layers) {
    detail::rms_norm_rows(pool, x.data(), rows, width, layer.attention_norm, kPixtralNormEps,
                          h.data());
    run_linear(pool, layer.q, h, rows, q);
    run_linear(pool, layer.k, h, rows, k);
    run_linear(pool, layer.v, h, rows, v);
    rotary.apply(pool, q);
    rotary.apply(pool, k);
    attention.run(pool, q, k, v, attended);
    run_linear(pool, layer.o, attended, rows, projected);
    detail::add_in_place(pool, x, projected);

    detail::rms_norm_rows(pool, x.data(), rows, width, layer.ffn_norm, kPixtralNormEps, h.data());
    run_linear(pool, layer.gate, h, rows, gate);
    run_linear(pool, layer.up, h, rows, up);
    detail::gated_activation_in_place(pool, gate, up, c.activation);
    run_linear(pool, layer.down, gate, rows, projected);
    detail::add_in_place(pool, x, projected);
  }
  return x;
}

}  // namespace quire::engine::vision
