#include "quire/engine/formats/gptq_writer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "quire/kernels/cpu/half.h"
#include "writer_support.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;

struct Step {
  std::uint16_t scale = 0;  // FP16
  int zero = 0;
};

// The smallest FP16 scale (from the exact one up) with a zero point that
// represents both ends of [low, high] within half a step, so nothing clips.
Step choose_step(double low, double high, bool exact_zeros, int bits) {
  const int top = (1 << bits) - 1;
  const int min_zero = exact_zeros ? 0 : 1;
  if (high - low <= 0.0) return {kernels::float_to_half(1.0f), (top + 1) / 2};  // all zero
  double scale = (high - low) / top;
  if (!exact_zeros && -low / scale < 0.5) scale = std::max(high / (top - 1), -low);
  std::uint16_t bits16 = detail::half_at_least(static_cast<float>(scale));
  for (;; ++bits16) {
    const double s = kernels::half_to_float(bits16);
    const int zero = std::clamp(static_cast<int>(std::lround(-low / s)), min_zero, top);
    if (low / s + zero >= -0.5 && high / s + zero <= top + 0.5) return {bits16, zero};
  }
}

}  // namespace

GptqTensors GptqEncoding::views() const {
  GptqTensors views;
  const int per_word = 32 / bits;
  views.qweight = {DType::I32, {in_features / per_word, out_features}, detail::byte_view(qweight)};
  views.qzeros = {DType::I32, {groups, out_features / per_word}, detail::byte_view(qzeros)};
  views.scales = {DType::F16, {groups, out_features}, detail::byte_view(scales)};
  if (!g_idx.empty()) views.g_idx = TensorView{DType::I32, {in_features}, detail::byte_view(g_idx)};
  return views;
}

std::vector<NamedTensor> GptqEncoding::tensors() const {
  const GptqTensors v = views();
  const auto named = [](const char* suffix, const TensorView& view) {
    return NamedTensor{suffix, view.dtype, view.shape,
                       std::vector<std::byte>(view.bytes.begin(), view.bytes.end())};
  };
  std::vector<NamedTensor> out = {named("qweight", v.qweight), named("qzeros", v.qzeros),
                                  named("scales", v.scales)};
  if (v.g_idx) out.push_back(named("g_idx", *v.g_idx));
  return out;
}

GptqEncoding quantize_gptq(std::span<const float> weight, std::int64_t out_features,
                           std::int64_t in_features, const GptqQuantizeOptions& options) {
  detail::check_matrix(weight, out_features, in_features);
  const int group_size = options.group_size;
  const int bits = options.bits;
  if (in_features % 8 != 0 || out_features % 8 != 0 || group_size <= 0 ||
      (group_size & (group_size - 1)) != 0 || (bits != 4 && bits != 8)) {
    throw std::invalid_argument(
        "GPTQ layer of " + std::to_string(out_features) + " x " + std::to_string(in_features) +
        " in groups of " + std::to_string(group_size) + " at " + std::to_string(bits) + " bits");
  }
  const int per_word = 32 / bits;
  const int top = (1 << bits) - 1;
  GptqEncoding out;
  out.in_features = in_features;
  out.out_features = out_features;
  out.group_size = group_size;
  out.groups = static_cast<int>((in_features + group_size - 1) / group_size);
  out.exact_zeros = options.exact_zeros;
  out.bits = bits;
  // order[i] is the i-th input in quantization order; groups fill in that order.
  const std::vector<std::int32_t> order =
      detail::seeded_permutation(in_features, options.act_order_seed);
  std::vector<std::int32_t> group_of(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    group_of[std::size_t(order[i])] = static_cast<std::int32_t>(i / std::size_t(group_size));
  }
  if (options.write_g_idx || options.act_order_seed) out.g_idx = group_of;

  out.qweight.assign(std::size_t(in_features / per_word * out_features), 0u);
  out.qzeros.assign(std::size_t(out.groups * out_features / per_word), 0u);
  out.scales.assign(std::size_t(out.groups * out_features), 0u);
  for (int g = 0; g < out.groups; ++g) {
    const std::int64_t first = std::int64_t(g) * group_size;
    const std::int64_t last = std::min<std::int64_t>(in_features, first + group_size);
    for (std::int64_t n = 0; n < out_features; ++n) {
      const float* row = weight.data() + n * in_features;
      double low = 0.0;
      double high = 0.0;
      for (std::int64_t i = first; i < last; ++i) {
        low = std::min(low, double(row[order[std::size_t(i)]]));
        high = std::max(high, double(row[order[std::size_t(i)]]));
      }
      const Step step = choose_step(low, high, options.exact_zeros, bits);
      const double scale = kernels::half_to_float(step.scale);
      out.scales[std::size_t(g * out_features + n)] = step.scale;
      const auto stored_zero =
          static_cast<std::uint32_t>(step.zero - (options.exact_zeros ? 0 : 1));
      out.qzeros[std::size_t(g * out_features / per_word + n / per_word)] |=
          stored_zero << (bits * (n % per_word));
      for (std::int64_t i = first; i < last; ++i) {
        const std::int64_t k = order[std::size_t(i)];
        const int q = std::clamp(static_cast<int>(std::lround(row[k] / scale)) + step.zero, 0, top);
        out.qweight[std::size_t((k / per_word) * out_features + n)] |= std::uint32_t(q)
                                                                       << (bits * (k % per_word));
      }
    }
  }
  return out;
}

}  // namespace quire::engine::formats
