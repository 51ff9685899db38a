#include "quire/engine/model/rope_frequencies.h"

#include <cmath>
#include <numbers>

namespace quire::engine {
namespace {

std::vector<float> base_frequencies(double base, int dim) {
  std::vector<float> inv_freq(static_cast<std::size_t>(dim / 2));
  for (int i = 0; i < dim / 2; ++i) {
    // FP32 throughout, as torch does: 1 / base ** (arange(0, dim, 2) / dim).
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
    inv_freq[static_cast<std::size_t>(i)] =
        1.0f / std::pow(static_cast<float>(base), exponent);
  }
  return inv_freq;
}

void apply_llama3(const RopeScaling& scaling, std::vector<float>& inv_freq) {
  const double old_context = static_cast<double>(scaling.original_max_position_embeddings);
  const double low_wavelength = old_context / scaling.low_freq_factor;
  const double high_wavelength = old_context / scaling.high_freq_factor;
  const float factor = static_cast<float>(scaling.factor);
  for (float& frequency : inv_freq) {
    const float wavelength = 2.0f * std::numbers::pi_v<float> / frequency;
    if (wavelength < high_wavelength) continue;  // high frequencies stay
    if (wavelength > low_wavelength) {
      frequency /= factor;  // low frequencies are stretched
      continue;
    }
    // In between: blend the two smoothly.
    const float smooth = static_cast<float>((old_context / wavelength - scaling.low_freq_factor) /
                                            (scaling.high_freq_factor - scaling.low_freq_factor));
    frequency = (1.0f - smooth) * frequency / factor + smooth * frequency;
  }
}

}  // namespace

bool rope_depends_on_length(const ModelConfig& config) {
  return config.rope_scaling.type == RopeScaling::Type::Dynamic;
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
      for (float& frequency : result.inv_freq) frequency /= static_cast<float>(scaling.factor);
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
  }
  return result;
}

}  // namespace quire::engine
