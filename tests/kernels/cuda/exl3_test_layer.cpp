#include "exl3_test_layer.h"

#include <cmath>

#include "quire/kernels/cpu/half.h"

namespace quire::test {

kernels::LinearWeight Exl3TestLayer::weight() const {
  kernels::LinearWeight w;
  w.in_features = in_features;
  w.out_features = out_features;
  w.format = kernels::Exl3Weight{trellis.data(), suh.data(),  svh.data(),  bits,
                                 codebook,       padded_in(), padded_out()};
  return w;
}

Exl3TestLayer random_exl3_layer(std::mt19937& rng, std::int64_t in_features,
                                std::int64_t out_features, int bits,
                                kernels::Exl3Codebook codebook) {
  Exl3TestLayer layer;
  layer.in_features = in_features;
  layer.out_features = out_features;
  layer.bits = bits;
  layer.codebook = codebook;
  std::uniform_int_distribution<int> word(0, 65535);
  std::uniform_real_distribution<float> unit(0.5f, 1.5f);
  layer.trellis.resize(std::size_t(layer.padded_in() / 16 * (layer.padded_out() / 16) * 16 * bits));
  for (std::uint16_t& w : layer.trellis)
    w = static_cast<std::uint16_t>(word(rng));
  const auto signs = [&](std::int64_t count, float scale) {
    std::vector<std::uint16_t> values(static_cast<std::size_t>(count));
    for (std::uint16_t& v : values)
      v = kernels::float_to_half((word(rng) & 1 ? -scale : scale) * unit(rng));
    return values;
  };
  layer.suh = signs(layer.padded_in(), 1.0f / std::sqrt(float(in_features)));
  layer.svh = signs(layer.padded_out(), 1.0f);
  return layer;
}

}  // namespace quire::test
