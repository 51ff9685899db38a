#include "quire/engine/formats/exl3_writer.h"

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"
#include "writer_support.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;
using kernels::Exl3Codebook;

void check_bits(int bits) {
  if (bits < kernels::kExl3MinBits || bits > kernels::kExl3MaxBits) {
    throw std::invalid_argument("EXL3 codes 1 to 8 bits per weight, not " + std::to_string(bits));
  }
}

}  // namespace

Exl3Tensors Exl3Encoding::views(std::vector<std::byte>& marker) const {
  Exl3Tensors views;
  views.trellis = {DType::I16,
                   {padded_in / 16, padded_out / 16, 16 * std::int64_t{bits}},
                   detail::byte_view(trellis)};
  views.suh = TensorView{DType::F16, {padded_in}, detail::byte_view(suh)};
  views.svh = TensorView{DType::F16, {padded_out}, detail::byte_view(svh)};
  if (codebook != Exl3Codebook::three_inst) {
    const std::uint32_t multiplier =
        codebook == Exl3Codebook::mcg ? kernels::kExl3McgMultiplier : kernels::kExl3Mul1Multiplier;
    marker.resize(4);
    std::memcpy(marker.data(), &multiplier, 4);
    const TensorView view{DType::I32, {}, std::span<const std::byte>(marker)};
    if (codebook == Exl3Codebook::mcg) {
      views.mcg = view;
    } else {
      views.mul1 = view;
    }
  }
  return views;
}

std::vector<NamedTensor> Exl3Encoding::tensors() const {
  std::vector<NamedTensor> out;
  out.push_back({"trellis",
                 DType::I16,
                 {padded_in / 16, padded_out / 16, 16 * std::int64_t{bits}},
                 detail::to_bytes(trellis)});
  out.push_back({"suh", DType::F16, {padded_in}, detail::to_bytes(suh)});
  out.push_back({"svh", DType::F16, {padded_out}, detail::to_bytes(svh)});
  if (codebook != Exl3Codebook::three_inst) {
    // exllamav3 stores the multiplier as a 0-dimensional tensor of the
    // uint32 bits viewed as int32.
    const std::uint32_t multiplier =
        codebook == Exl3Codebook::mcg ? kernels::kExl3McgMultiplier : kernels::kExl3Mul1Multiplier;
    std::vector<std::byte> bytes(4);
    std::memcpy(bytes.data(), &multiplier, 4);
    out.push_back({codebook == Exl3Codebook::mcg ? "mcg" : "mul1", DType::I32, {}, bytes});
  }
  return out;
}

void pack_exl3_tile(std::span<const std::uint16_t> symbols, int bits, std::uint16_t* tile) {
  check_bits(bits);
  if (symbols.size() != kernels::kExl3TileWeights) {
    throw std::invalid_argument("an EXL3 tile has 256 symbols, not " +
                                std::to_string(symbols.size()));
  }
  const int words = kernels::exl3_tile_words(bits);
  std::vector<std::uint32_t> stream(static_cast<std::size_t>(words / 2), 0);
  for (int t = 0; t < kernels::kExl3TileWeights; ++t) {
    const std::uint32_t symbol = symbols[std::size_t(t)];
    if (symbol >> bits != 0) {
      throw std::invalid_argument("symbol " + std::to_string(symbol) + " does not fit " +
                                  std::to_string(bits) + " bits");
    }
    for (int b = 0; b < bits; ++b) {
      const int bit = t * bits + b;  // stream position of the symbol's bit (bits - 1 - b)
      if (((symbol >> (bits - 1 - b)) & 1u) != 0) {
        stream[std::size_t(bit / 32)] |= 1u << (31 - bit % 32);
      }
    }
  }
  for (int j = 0; j < words / 2; ++j) {
    tile[2 * j] = static_cast<std::uint16_t>(stream[std::size_t(j)] & 0xffffu);
    tile[2 * j + 1] = static_cast<std::uint16_t>(stream[std::size_t(j)] >> 16);
  }
}

std::vector<std::uint16_t> exl3_states_of_symbols(std::span<const std::uint16_t> symbols,
                                                  int bits) {
  check_bits(bits);
  const int count = kernels::kExl3TileWeights;
  std::vector<std::uint16_t> states(static_cast<std::size_t>(count));
  for (int t = 0; t < count; ++t) {
    std::uint32_t state = 0;
    // The symbols whose bits reach into the 16 bits ending with symbol t.
    const int reach = (16 + bits - 1) / bits;
    for (int i = reach - 1; i >= 0; --i) {
      const std::uint32_t symbol = symbols[std::size_t(((t - i) % count + count) % count)];
      state = (state << bits) | symbol;
    }
    states[std::size_t(t)] = static_cast<std::uint16_t>(state & 0xffffu);
  }
  return states;
}

double exl3_codebook_rms(Exl3Codebook codebook) {
  const float* table = kernels::exl3_codebook_table(codebook);
  double sum = 0.0;
  for (int state = 0; state < 65536; ++state)
    sum += double(table[state]) * double(table[state]);
  return std::sqrt(sum / 65536.0);
}

Exl3Encoding random_exl3(std::int64_t out_features, std::int64_t in_features,
                         const Exl3RandomOptions& options) {
  check_bits(options.bits);
  if (out_features <= 0 || in_features <= 0) {
    throw std::invalid_argument("an EXL3 layer needs inputs and outputs");
  }
  Exl3Encoding encoding;
  encoding.in_features = in_features;
  encoding.out_features = out_features;
  encoding.padded_in = exl3_padded(in_features);
  encoding.padded_out = exl3_padded(out_features);
  encoding.bits = options.bits;
  encoding.codebook = options.codebook;
  std::mt19937_64 random(options.seed);
  const auto tiles =
      static_cast<std::size_t>((encoding.padded_in / 16) * (encoding.padded_out / 16));
  const int words = kernels::exl3_tile_words(options.bits);
  encoding.trellis.resize(tiles * std::size_t(words));
  std::vector<std::uint16_t> symbols(kernels::kExl3TileWeights);
  const std::uint64_t mask = (std::uint64_t{1} << options.bits) - 1;
  for (std::size_t tile = 0; tile < tiles; ++tile) {
    for (std::uint16_t& symbol : symbols)
      symbol = static_cast<std::uint16_t>(random() & mask);
    pack_exl3_tile(symbols, options.bits, encoding.trellis.data() + tile * std::size_t(words));
  }
  const double scale = options.deviation / exl3_codebook_rms(options.codebook);
  const auto signs = [&](std::int64_t count, double magnitude) {
    std::vector<std::uint16_t> values(static_cast<std::size_t>(count));
    for (std::uint16_t& value : values) {
      const float signed_magnitude =
          static_cast<float>((random() & 1u) != 0 ? -magnitude : magnitude);
      value = kernels::float_to_half(signed_magnitude);
    }
    return values;
  };
  encoding.suh = signs(encoding.padded_in, scale);
  encoding.svh = signs(encoding.padded_out, 1.0);
  return encoding;
}

}  // namespace quire::engine::formats
