#include "quire/engine/formats/exl3_quantizer.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "exl3_ldlq.h"
#include "exl3_regularize.h"
#include "exl3_scale_search.h"
#include "exl3_tile_coder.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"
#include "writer_support.h"

namespace quire::engine::formats {
namespace {

using detail::Exl3Regularized;
using detail::Exl3TileCoder;
using detail::kTileValues;

// The calibration Hessian averaged over its rows, padded to Kp with zeros,
// its diagonal raised by `damping` times its mean.
std::vector<double> damped_hessian(const Exl3QuantizeOptions& options, std::int64_t in_features,
                                   std::int64_t padded_in) {
  std::vector<double> hessian(static_cast<std::size_t>(padded_in * padded_in), 0.0);
  const double rows = double(options.hessian_rows);
  double mean = 0.0;
  for (std::int64_t i = 0; i < in_features; ++i) {
    for (std::int64_t j = 0; j < in_features; ++j) {
      const double value = options.hessian[std::size_t(i * in_features + j)] / rows;
      if (!std::isfinite(value)) {
        throw std::invalid_argument("EXL3 quantizer: the calibration Hessian is not finite");
      }
      hessian[std::size_t(i * padded_in + j)] = value;
    }
    mean += hessian[std::size_t(i * padded_in + i)] / double(padded_in);
  }
  for (std::int64_t i = 0; i < padded_in; ++i)
    hessian[std::size_t(i * padded_in + i)] += options.damping * mean;
  return hessian;
}

void check_options(std::span<const float> weight, std::int64_t out_features,
                   std::int64_t in_features, const Exl3QuantizeOptions& options) {
  if (options.bits < kernels::kExl3MinBits || options.bits > kernels::kExl3MaxBits) {
    throw std::invalid_argument("EXL3 codes 1 to 8 bits per weight, not " +
                                std::to_string(options.bits));
  }
  detail::check_matrix(weight, out_features, in_features);
  if (!options.hessian.empty()) {
    if (options.hessian.size() != std::size_t(in_features * in_features)) {
      throw std::invalid_argument("EXL3 quantizer: a Hessian of " +
                                  std::to_string(options.hessian.size()) + " values for " +
                                  std::to_string(in_features) + " inputs");
    }
    if (options.hessian_rows <= 0) {
      throw std::invalid_argument("EXL3 quantizer: a Hessian needs its number of rows");
    }
  }
}

// Every tile at once: no feedback between them.
void code_tiles(const Exl3Regularized& r, Exl3TileCoder& coder, std::vector<float>& coded,
                std::vector<std::uint16_t>& states) {
  const std::int64_t row_tiles = r.padded_in / 16;
  const std::int64_t column_tiles = r.padded_out / 16;
  std::vector<float> targets(states.size()), decoded(states.size());
  for (std::int64_t kt = 0; kt < row_tiles; ++kt) {
    for (std::int64_t nt = 0; nt < column_tiles; ++nt) {
      detail::gather_tile(r.weight.data(), r.padded_out, kt, nt,
                          targets.data() + std::size_t(kt * column_tiles + nt) * kTileValues);
    }
  }
  coder.code(targets, decoded, states);
  for (std::int64_t kt = 0; kt < row_tiles; ++kt) {
    for (std::int64_t nt = 0; nt < column_tiles; ++nt) {
      detail::scatter_tile(decoded.data() + std::size_t(kt * column_tiles + nt) * kTileValues,
                           r.padded_out, kt, nt, coded.data());
    }
  }
}

// LDLQ: blocks of 16 rows from the last, each with the feedback of the
// errors of those coded before it.
void code_with_feedback(const Exl3Regularized& r, const std::vector<double>& feedback,
                        Exl3TileCoder& coder, std::vector<float>& coded,
                        std::vector<std::uint16_t>& states) {
  const std::int64_t rows = r.padded_in;
  const std::int64_t columns = r.padded_out;
  const std::int64_t column_tiles = columns / 16;
  std::vector<double> shift(static_cast<std::size_t>(rows * columns), 0.0);
  std::vector<float> block(static_cast<std::size_t>(16 * columns));
  std::vector<float> targets(std::size_t(column_tiles) * kTileValues), decoded(targets.size());
  std::vector<double> error(static_cast<std::size_t>(16 * columns));
  for (std::int64_t first = rows - 16; first >= 0; first -= 16) {
    for (std::int64_t i = 0; i < 16 * columns; ++i) {
      block[std::size_t(i)] =
          static_cast<float>(double(r.weight[std::size_t(first * columns + i)]) +
                             shift[std::size_t(first * columns + i)]);
    }
    for (std::int64_t nt = 0; nt < column_tiles; ++nt)
      detail::gather_tile(block.data(), columns, 0, nt,
                          targets.data() + std::size_t(nt) * kTileValues);
    const std::size_t tile_row = std::size_t(first / 16 * column_tiles) * kTileValues;
    coder.code(targets, decoded, std::span(states).subspan(tile_row, targets.size()));
    for (std::int64_t nt = 0; nt < column_tiles; ++nt) {
      detail::scatter_tile(decoded.data() + std::size_t(nt) * kTileValues, columns, first / 16, nt,
                           coded.data());
    }
    for (std::int64_t i = 0; i < 16 * columns; ++i) {
      const std::size_t at = std::size_t(first * columns + i);
      error[std::size_t(i)] = double(r.weight[at]) - double(coded[at]);
    }
    // Every earlier row takes its share of this block's errors.
    coder.pool().parallel_for(first, 4, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t row = begin; row < end; ++row) {
        double* out = shift.data() + row * columns;
        for (std::int64_t m = 0; m < 16; ++m) {
          const double share = feedback[std::size_t((first + m) * rows + row)];
          const double* e = error.data() + m * columns;
          for (std::int64_t n = 0; n < columns; ++n)
            out[n] += share * e[n];
        }
      }
    });
  }
}

// tr(A H A^T) for A [N, K] and H [K, K].
double weighted_square(const std::vector<double>& a, std::int64_t out_features,
                       std::span<const double> hessian, std::int64_t in_features) {
  double total = 0.0;
  std::vector<double> product(static_cast<std::size_t>(in_features));
  for (std::int64_t n = 0; n < out_features; ++n) {
    const double* row = a.data() + n * in_features;
    for (std::int64_t j = 0; j < in_features; ++j)
      product[std::size_t(j)] = 0.0;
    for (std::int64_t i = 0; i < in_features; ++i) {
      const double* h = hessian.data() + i * in_features;
      for (std::int64_t j = 0; j < in_features; ++j)
        product[std::size_t(j)] += row[i] * h[j];
    }
    for (std::int64_t j = 0; j < in_features; ++j)
      total += product[std::size_t(j)] * row[j];
  }
  return total;
}

void measure(std::span<const float> weight, const std::vector<float>& coded,
             const Exl3Encoding& encoding, const Exl3QuantizeOptions& options,
             Exl3QuantizeReport& report) {
  const std::vector<double> rebuilt = detail::reconstruct_exl3(coded, encoding);
  std::vector<double> difference(rebuilt.size()), original(rebuilt.size());
  double error = 0.0, total = 0.0;
  for (std::size_t i = 0; i < rebuilt.size(); ++i) {
    original[i] = weight[i];
    difference[i] = original[i] - rebuilt[i];
    error += difference[i] * difference[i];
    total += original[i] * original[i];
  }
  report.weight_error = total > 0.0 ? error / total : 0.0;
  if (!options.hessian.empty()) {
    const double signal =
        weighted_square(original, encoding.out_features, options.hessian, encoding.in_features);
    const double noise =
        weighted_square(difference, encoding.out_features, options.hessian, encoding.in_features);
    report.proxy_error = signal > 0.0 ? noise / signal : 0.0;
  }
}

}  // namespace

Exl3Encoding quantize_exl3(std::span<const float> weight, std::int64_t out_features,
                           std::int64_t in_features, const Exl3QuantizeOptions& options,
                           Exl3QuantizeReport* report) {
  check_options(weight, out_features, in_features, options);
  const std::int64_t padded_in = (in_features + 127) / 128 * 128;
  std::vector<double> hessian;
  std::vector<double> input_power;
  if (!options.hessian.empty()) {
    hessian = damped_hessian(options, in_features, padded_in);
    for (std::int64_t i = 0; i < padded_in; ++i)
      input_power.push_back(hessian[std::size_t(i * padded_in + i)]);
  }
  Exl3Regularized r =
      detail::regularize_exl3(weight, out_features, in_features, options, input_power);
  Exl3TileCoder coder(options.bits, options.codebook, options.threads);
  Exl3QuantizeReport summary;
  summary.out_scales = r.out_scales;
  if (options.search_scale) {
    const detail::Exl3ScaleChoice choice = detail::search_exl3_scale(r, coder);
    detail::rescale_exl3(r, choice.scale);
    summary.global_scale = choice.scale;
    summary.sample_error = choice.error;
  }

  const std::int64_t row_tiles = r.padded_in / 16;
  const std::int64_t column_tiles = r.padded_out / 16;
  const std::int64_t tiles = row_tiles * column_tiles;
  std::vector<float> coded(r.weight.size());
  std::vector<std::uint16_t> states(std::size_t(tiles) * kTileValues);
  if (hessian.empty()) {
    code_tiles(r, coder, coded, states);
  } else {
    const std::vector<double> feedback =
        detail::ldl_feedback(detail::rotate_hessian(hessian, r.su), padded_in, options.damping);
    code_with_feedback(r, feedback, coder, coded, states);
    summary.error_feedback = true;
  }

  Exl3Encoding encoding;
  encoding.in_features = in_features;
  encoding.out_features = out_features;
  encoding.padded_in = r.padded_in;
  encoding.padded_out = r.padded_out;
  encoding.bits = options.bits;
  encoding.codebook = options.codebook;
  const int words = kernels::exl3_tile_words(options.bits);
  encoding.trellis.resize(std::size_t(tiles) * std::size_t(words));
  const std::uint16_t mask = static_cast<std::uint16_t>((1u << options.bits) - 1u);
  std::vector<std::uint16_t> symbols(kTileValues);
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    for (std::size_t t = 0; t < kTileValues; ++t)
      symbols[t] = states[std::size_t(tile) * kTileValues + t] & mask;
    pack_exl3_tile(symbols, options.bits, encoding.trellis.data() + std::size_t(tile * words));
  }
  for (const double su : r.su)
    encoding.suh.push_back(kernels::float_to_half(static_cast<float>(su)));
  for (const double sv : r.sv)
    encoding.svh.push_back(kernels::float_to_half(static_cast<float>(sv)));

  if (report != nullptr) {
    summary.tiles = tiles;
    summary.tiles_coded = coder.tiles_coded();
    measure(weight, coded, encoding, options, summary);
    *report = summary;
  }
  return encoding;
}

}  // namespace quire::engine::formats
