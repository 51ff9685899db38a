#include "exl3_regularize.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"

namespace quire::engine::formats::detail {
namespace {

constexpr std::int64_t kRotation = kernels::kExl3RotationSize;

// Below this a row or column counts as all zeros (exllamav3's threshold).
constexpr double kNoWeights = 1e-30;

std::int64_t rotation_padded(std::int64_t features) {
  return (features + kRotation - 1) / kRotation * kRotation;
}

std::vector<double> random_signs(std::mt19937_64& random, std::int64_t count) {
  std::vector<double> signs(static_cast<std::size_t>(count));
  for (double& sign : signs)
    sign = (random() & 1u) != 0 ? -1.0 : 1.0;
  return signs;
}

// Whether outputs get their own scales: always or never as asked; by
// default only with calibration inputs, and then where those are not
// dominated by a few channels. exllamav3 found that scaling outputs helps
// unless the layer's input is very irregular, and draws the line at 2% of
// the input channels holding 15% of the sum of their RMS.
bool use_out_scales(Exl3OutScales mode, std::span<const double> input_power) {
  if (mode != Exl3OutScales::automatic) return mode == Exl3OutScales::always;
  if (input_power.empty()) return false;
  std::vector<double> rms(input_power.size());
  for (std::size_t i = 0; i < rms.size(); ++i)
    rms[i] = std::sqrt(std::max(input_power[i], 0.0));
  std::sort(rms.begin(), rms.end(), std::greater<>());
  const std::size_t few = rms.size() / 50;
  double total = 0.0, top = 0.0;
  for (std::size_t i = 0; i < rms.size(); ++i) {
    total += rms[i];
    if (i < few) top += rms[i];
  }
  return total > 0.0 && top / total < 0.15;
}

}  // namespace

void hadamard_columns(std::span<double> matrix, std::int64_t rows, std::int64_t columns) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < columns; c += kRotation)
      kernels::exl3_hadamard128(matrix.data() + r * columns + c);
  }
}

void hadamard_rows(std::span<double> matrix, std::int64_t rows, std::int64_t columns) {
  std::vector<double> column(static_cast<std::size_t>(kRotation));
  for (std::int64_t r0 = 0; r0 < rows; r0 += kRotation) {
    for (std::int64_t c = 0; c < columns; ++c) {
      for (std::int64_t i = 0; i < kRotation; ++i)
        column[std::size_t(i)] = matrix[std::size_t((r0 + i) * columns + c)];
      kernels::exl3_hadamard128(column.data());
      for (std::int64_t i = 0; i < kRotation; ++i)
        matrix[std::size_t((r0 + i) * columns + c)] = column[std::size_t(i)];
    }
  }
}

Exl3Regularized regularize_exl3(std::span<const float> weight, std::int64_t out_features,
                                std::int64_t in_features, const Exl3QuantizeOptions& options,
                                std::span<const double> input_power) {
  Exl3Regularized result;
  const std::int64_t rows = rotation_padded(in_features);
  const std::int64_t columns = rotation_padded(out_features);
  result.padded_in = rows;
  result.padded_out = columns;
  std::mt19937_64 random(options.seed);
  result.su = random_signs(random, rows);
  result.sv = random_signs(random, columns);

  // W^T, padded with zeros.
  std::vector<double> w(static_cast<std::size_t>(rows * columns), 0.0);
  for (std::int64_t n = 0; n < out_features; ++n) {
    for (std::int64_t k = 0; k < in_features; ++k)
      w[std::size_t(k * columns + n)] = weight[std::size_t(n * in_features + k)];
  }

  // Outputs: each column's RMS over the mean of them, where asked for.
  std::vector<double> column_rms(static_cast<std::size_t>(columns), 0.0);
  for (std::int64_t k = 0; k < rows; ++k) {
    for (std::int64_t n = 0; n < columns; ++n)
      column_rms[std::size_t(n)] +=
          w[std::size_t(k * columns + n)] * w[std::size_t(k * columns + n)];
  }
  double mean = 0.0;
  for (double& rms : column_rms) {
    rms = std::sqrt(rms / double(rows));
    mean += rms / double(columns);
  }
  result.out_scales = use_out_scales(options.out_scales, input_power) && mean > kNoWeights;
  for (std::int64_t n = 0; n < columns; ++n) {
    const bool zero = column_rms[std::size_t(n)] < kNoWeights;
    if (result.out_scales)
      result.sv[std::size_t(n)] *= zero ? 0.1 : column_rms[std::size_t(n)] / mean;
    for (std::int64_t k = 0; k < rows; ++k)
      w[std::size_t(k * columns + n)] /= result.sv[std::size_t(n)];
    // An output with no weights stays exactly 0, whatever its coded column holds.
    if (zero) result.sv[std::size_t(n)] = 0.0;
  }
  hadamard_columns(w, rows, columns);

  // Inputs: each row brought to the codebook's RMS.
  const double codebook_rms = exl3_codebook_rms(options.codebook);
  for (std::int64_t k = 0; k < rows; ++k) {
    double sum = 0.0;
    for (std::int64_t n = 0; n < columns; ++n)
      sum += w[std::size_t(k * columns + n)] * w[std::size_t(k * columns + n)];
    double rms = std::sqrt(sum / double(columns));
    if (rms < kNoWeights) rms = 0.1;
    double& su = result.su[std::size_t(k)];
    su = su * rms / codebook_rms;
    for (std::int64_t n = 0; n < columns; ++n)
      w[std::size_t(k * columns + n)] /= su;
  }
  hadamard_rows(w, rows, columns);
  result.weight.assign(w.begin(), w.end());
  return result;
}

void rescale_exl3(Exl3Regularized& regularized, double scale) {
  for (float& value : regularized.weight)
    value = static_cast<float>(double(value) * scale);
  for (double& su : regularized.su)
    su /= scale;
}

std::vector<double> reconstruct_exl3(std::span<const float> coded, const Exl3Encoding& encoding) {
  const std::int64_t rows = encoding.padded_in;
  const std::int64_t columns = encoding.padded_out;
  std::vector<double> w(coded.begin(), coded.end());
  hadamard_rows(w, rows, columns);
  for (std::int64_t k = 0; k < rows; ++k) {
    const double su = kernels::half_to_float(encoding.suh[std::size_t(k)]);
    for (std::int64_t n = 0; n < columns; ++n)
      w[std::size_t(k * columns + n)] *= su;
  }
  hadamard_columns(w, rows, columns);
  std::vector<double> out(static_cast<std::size_t>(encoding.out_features * encoding.in_features));
  for (std::int64_t n = 0; n < encoding.out_features; ++n) {
    const double sv = kernels::half_to_float(encoding.svh[std::size_t(n)]);
    for (std::int64_t k = 0; k < encoding.in_features; ++k)
      out[std::size_t(n * encoding.in_features + k)] = w[std::size_t(k * columns + n)] * sv;
  }
  return out;
}

}  // namespace quire::engine::formats::detail
