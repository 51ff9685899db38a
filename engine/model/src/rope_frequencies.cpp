#include "quire/engine/model/rope_frequencies.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace quire::engine {
namespace {

std::vector<float> base_frequencies(double base, int dim) {
  std::vector<float> inv_freq(static_cast<std::size_t>(dim / 2));
  for (int i = 0; i < dim / 2; ++i) {
    // FP32 throughout, as torch does: 1 / base ** (arange(0, dim, 2) / dim).
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
    inv_freq[static_cast<std::size_t>(i)] = 1.0f / std::pow(static_cast<float>(base), exponent);
  }
  return inv_freq;
}

// transformers computes these tables with float32 tensors and Python
// doubles as scalars: every tensor operation rounds to float, the scalar is
// rounded to float first, and `scalar / tensor` is the tensor's reciprocal
// times the scalar. The steps below keep that order so that the tables match
// bit for bit, not just closely.
float reciprocal_times(float value, double scalar) {
  return (1.0f / value) * static_cast<float>(scalar);
}

void apply_llama3(const RopeScaling& scaling, std::vector<float>& inv_freq) {
  const double old_context = static_cast<double>(scaling.original_max_position_embeddings);
  const auto low_wavelength = static_cast<float>(old_context / scaling.low_freq_factor);
  const auto high_wavelength = static_cast<float>(old_context / scaling.high_freq_factor);
  const auto factor = static_cast<float>(scaling.factor);
  const auto low_freq_factor = static_cast<float>(scaling.low_freq_factor);
  const auto band = static_cast<float>(scaling.high_freq_factor - scaling.low_freq_factor);
  for (float& frequency : inv_freq) {
    const float wavelength = reciprocal_times(frequency, 2.0 * std::numbers::pi);
    if (wavelength < high_wavelength) continue;  // high frequencies stay
    if (wavelength > low_wavelength) {
      frequency /= factor;  // low frequencies are stretched
      continue;
    }
    // In between (both bounds included): blend the two smoothly.
    const float smooth = (reciprocal_times(wavelength, old_context) - low_freq_factor) / band;
    frequency = (1.0f - smooth) * frequency / factor + smooth * frequency;
  }
}

// get_mscale of the YaRN paper: how much attention sharpens at a scale.
double yarn_mscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

// YaRN ("NTK-by-parts"): dimensions that turn many times over the trained
// context keep their frequency (extrapolation), those that turn less than
// once are interpolated by the factor, and a linear ramp over the dimensions
// between beta_fast and beta_slow rotations blends the two.
RopeFrequencies yarn(const ModelConfig& config, int dim) {
  const RopeScaling& scaling = config.rope_scaling;
  const double base = config.rope_theta;
  const auto original = static_cast<double>(scaling.original_max_position_embeddings);
  // The dimension index at which a frequency turns `rotations` times over the original context.
  const auto dimension_of = [&](double rotations) {
    return dim * std::log(original / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
  };
  double low = dimension_of(scaling.beta_fast);
  double high = dimension_of(scaling.beta_slow);
  if (scaling.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;  // a ramp of one step would divide by zero

  const auto factor = static_cast<float>(scaling.factor);
  const auto ramp_start = static_cast<float>(low);
  const auto ramp_width = static_cast<float>(high - low);
  RopeFrequencies result;
  result.inv_freq.resize(static_cast<std::size_t>(dim / 2));
  for (int i = 0; i < dim / 2; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
    const float position_frequency = std::pow(static_cast<float>(base), exponent);
    const float extrapolated = 1.0f / position_frequency;
    const float interpolated = 1.0f / (factor * position_frequency);
    const float ramp = std::clamp((static_cast<float>(i) - ramp_start) / ramp_width, 0.0f, 1.0f);
    const float keep = 1.0f - ramp;  // the share of the extrapolated frequency
    result.inv_freq[static_cast<std::size_t>(i)] =
        interpolated * (1.0f - keep) + extrapolated * keep;
  }

  double attention_factor = 0.0;
  if (scaling.attention_factor) {
    attention_factor = *scaling.attention_factor;
  } else if (scaling.mscale != 0.0 && scaling.mscale_all_dim != 0.0) {
    attention_factor = yarn_mscale(scaling.factor, scaling.mscale) /
                       yarn_mscale(scaling.factor, scaling.mscale_all_dim);
  } else {
    attention_factor = yarn_mscale(scaling.factor, 1.0);
  }
  result.attention_factor = static_cast<float>(attention_factor);
  return result;
}

// LongRoPE (Phi-3): each frequency divided by its own factor, the short list
// up to the original context and the long one beyond it, with cos and sin
// scaled by sqrt(1 + ln(factor) / ln(original)) unless the file gives the
// attention factor.
RopeFrequencies longrope(const ModelConfig& config, int dim, std::int64_t sequence_length) {
  const RopeScaling& scaling = config.rope_scaling;
  const auto original = static_cast<double>(scaling.original_max_position_embeddings);
  const std::vector<double>& factors =
      static_cast<double>(sequence_length) > original ? scaling.long_factor : scaling.short_factor;
  RopeFrequencies result;
  result.inv_freq.resize(static_cast<std::size_t>(dim / 2));
  for (int i = 0; i < dim / 2; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
    const float position_frequency = std::pow(static_cast<float>(config.rope_theta), exponent);
    const float divisor =
        static_cast<float>(factors[static_cast<std::size_t>(i)]) * position_frequency;
    result.inv_freq[static_cast<std::size_t>(i)] = 1.0f / divisor;
  }
  double attention_factor = 1.0;
  if (scaling.attention_factor) {
    attention_factor = *scaling.attention_factor;
  } else if (scaling.factor > 1.0) {
    attention_factor = std::sqrt(1.0 + std::log(scaling.factor) / std::log(original));
  }
  result.attention_factor = static_cast<float>(attention_factor);
  return result;
}

}  // namespace

bool rope_depends_on_length(const ModelConfig& config) {
  return config.rope_scaling.type == RopeScaling::Type::Dynamic ||
         config.rope_scaling.type == RopeScaling::Type::LongRope;
}

RopeFrequencies local_rope_frequencies(const ModelConfig& config) {
  RopeFrequencies result;
  result.inv_freq =
      base_frequencies(config.rope_local_theta.value_or(config.rope_theta), config.rotary_dim());
  return result;
}

RopeFrequencies rope_frequencies(const ModelConfig& config, std::int64_t sequence_length) {
  const int dim = config.rotary_dim();
  const RopeScaling& scaling = config.rope_scaling;
  RopeFrequencies result;
  switch (scaling.type) {
    case RopeScaling::Type::None:
      result.inv_freq = base_frequencies(config.rope_theta, dim);
      break;
    case RopeScaling::Type::Linear:
      result.inv_freq = base_frequencies(config.rope_theta, dim);
      for (float& frequency : result.inv_freq)
        frequency /= static_cast<float>(scaling.factor);
      break;
    case RopeScaling::Type::Dynamic: {
      const auto original = static_cast<double>(scaling.original_max_position_embeddings);
      double base = config.rope_theta;
      if (static_cast<double>(sequence_length) > original) {
        base *= std::pow(scaling.factor * static_cast<double>(sequence_length) / original -
                             (scaling.factor - 1.0),
                         static_cast<double>(dim) / (dim - 2));
      }
      result.inv_freq = base_frequencies(base, dim);
      break;
    }
    case RopeScaling::Type::Llama3:
      result.inv_freq = base_frequencies(config.rope_theta, dim);
      apply_llama3(scaling, result.inv_freq);
      break;
    case RopeScaling::Type::Yarn:
      result = yarn(config, dim);
      break;
    case RopeScaling::Type::LongRope:
      result = longrope(config, dim, sequence_length);
      break;
  }
  return result;
}

}  // namespace quire::engine
