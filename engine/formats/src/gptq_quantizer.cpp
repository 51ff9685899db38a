#include "quire/engine/formats/gptq_quantizer.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "dense_cholesky.h"
#include "int_group_scale.h"
#include "writer_support.h"

namespace quire::engine::formats {
namespace {

// U with U^T U = H^-1 (upper triangular, row-major), H damped until its
// factorization succeeds.
std::vector<double> inverse_upper_factor(std::vector<double> hessian, std::int64_t size,
                                         double damping) {
  double mean = 0.0;
  for (std::int64_t i = 0; i < size; ++i)
    mean += hessian[std::size_t(i * size + i)] / double(size);
  const double step = damping * std::max(mean, 1e-30);
  for (std::int64_t i = 0; i < size; ++i)
    hessian[std::size_t(i * size + i)] += step;
  std::vector<double> factor = hessian;
  for (int attempt = 0; !detail::cholesky(factor, size); ++attempt) {
    if (attempt == 10) {
      throw std::runtime_error(
          "GPTQ: the calibration inputs do not determine the layer's weights (their Hessian is not "
          "positive definite, even with damping); give a longer or more varied calibration text");
    }
    for (std::int64_t i = 0; i < size; ++i)
      hessian[std::size_t(i * size + i)] += step;
    factor = hessian;
  }
  std::vector<double> inverse = detail::inverse_from_cholesky(factor, size);
  if (!detail::cholesky(inverse, size)) {
    throw std::runtime_error(
        "GPTQ: the calibration inputs are too nearly dependent for the inverse of their Hessian; "
        "give a longer or more varied calibration text");
  }
  // The lower factor C of H^-1 is in the lower triangle; U = C^T.
  std::vector<double> upper(inverse.size(), 0.0);
  for (std::int64_t i = 0; i < size; ++i) {
    for (std::int64_t j = 0; j <= i; ++j)
      upper[std::size_t(j * size + i)] = inverse[std::size_t(i * size + j)];
  }
  return upper;
}

// tr(E H E^T) for E [rows, size] row-major.
double weighted_error(const std::vector<double>& error, std::int64_t rows, std::int64_t size,
                      std::span<const double> hessian) {
  double total = 0.0;
  std::vector<double> product(static_cast<std::size_t>(size));
  for (std::int64_t n = 0; n < rows; ++n) {
    const double* e = error.data() + n * size;
    std::fill(product.begin(), product.end(), 0.0);
    for (std::int64_t i = 0; i < size; ++i) {
      if (e[i] == 0.0) continue;
      const double* h = hessian.data() + i * size;
      for (std::int64_t j = 0; j < size; ++j)
        product[std::size_t(j)] += e[i] * h[j];
    }
    for (std::int64_t j = 0; j < size; ++j)
      total += product[std::size_t(j)] * e[j];
  }
  return total;
}

}  // namespace

IntQuantized quantize_ints_gptq(std::span<const float> weight, std::int64_t out, std::int64_t in,
                                const IntGptqOptions& options, IntGptqReport* report) {
  detail::check_matrix(weight, out, in);
  detail::check_int_layer(out, in, options.format);
  if (std::int64_t(options.hessian.size()) != in * in) {
    throw std::invalid_argument("GPTQ: a Hessian of " + std::to_string(options.hessian.size()) +
                                " values for " + std::to_string(in) + " inputs (expected " +
                                std::to_string(in * in) + ")");
  }
  const std::int64_t group_size = options.format.group_size == 0 ? in : options.format.group_size;

  // order[j]: the input rounded j-th.
  std::vector<std::int32_t> order(static_cast<std::size_t>(in));
  std::iota(order.begin(), order.end(), 0);
  const auto diagonal = [&](std::int64_t k) { return options.hessian[std::size_t(k * in + k)]; };
  if (options.actorder) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int32_t a, std::int32_t b) { return diagonal(a) > diagonal(b); });
  }
  // W and H in that order; dead inputs zeroed, with a unit diagonal.
  std::vector<double> w(std::size_t(out * in));
  std::vector<double> h(std::size_t(in * in));
  for (std::int64_t j = 0; j < in; ++j) {
    const std::int64_t k = order[std::size_t(j)];
    const bool dead = diagonal(k) == 0.0;
    for (std::int64_t n = 0; n < out; ++n)
      w[std::size_t(n * in + j)] = dead ? 0.0 : double(weight[std::size_t(n * in + k)]);
    for (std::int64_t i = 0; i < in; ++i)
      h[std::size_t(j * in + i)] = options.hessian[std::size_t(k * in + order[std::size_t(i)])];
    if (dead) h[std::size_t(j * in + j)] = 1.0;
  }
  const std::vector<double> original = w;
  const std::vector<double> upper = inverse_upper_factor(h, in, options.damping);

  IntQuantized q;
  q.out_features = out;
  q.in_features = in;
  q.groups = in / group_size;
  q.values.resize(std::size_t(out * in));
  q.scales.resize(std::size_t(out * q.groups));
  q.zeros.resize(std::size_t(out * q.groups));
  if (options.actorder) {
    q.g_idx.resize(std::size_t(in));
    for (std::int64_t j = 0; j < in; ++j)
      q.g_idx[std::size_t(order[std::size_t(j)])] = static_cast<std::int32_t>(j / group_size);
  }
  std::vector<detail::IntGroupScale> scales(static_cast<std::size_t>(out));
  std::vector<double> dequantized(std::size_t(out * in));
  for (std::int64_t j = 0; j < in; ++j) {
    const std::int64_t g = j / group_size;
    if (j % group_size == 0) {
      for (std::int64_t n = 0; n < out; ++n) {
        const double* group = w.data() + n * in + j;
        double min = 0.0;
        double max = 0.0;
        for (std::int64_t i = 0; i < group_size; ++i) {
          min = std::min(min, group[i]);
          max = std::max(max, group[i]);
        }
        const detail::IntGroupScale scale = detail::int_group_scale(min, max, options.format);
        scales[std::size_t(n)] = scale;
        q.scales[std::size_t(n * q.groups + g)] = scale.scale;
        q.zeros[std::size_t(n * q.groups + g)] = static_cast<std::int8_t>(scale.zero);
      }
    }
    const double* u = upper.data() + j * in;
    const std::int64_t k = order[std::size_t(j)];
    for (std::int64_t n = 0; n < out; ++n) {
      double* row = w.data() + n * in;
      const detail::IntGroupScale& scale = scales[std::size_t(n)];
      const int value = scale.quantize(row[j]);
      q.values[std::size_t(n * in + k)] = static_cast<std::int8_t>(value);
      const double coded = scale.dequantize(value);
      dequantized[std::size_t(n * in + j)] = coded;
      const double error = (row[j] - coded) / u[j];
      for (std::int64_t i = j + 1; i < in; ++i)
        row[i] -= error * u[i];
    }
  }

  if (report != nullptr) {
    // Round-to-nearest over the same groups, for comparison.
    std::vector<double> rounded_error(std::size_t(out * in));
    for (std::int64_t n = 0; n < out; ++n) {
      const double* row = original.data() + n * in;
      for (std::int64_t j0 = 0; j0 < in; j0 += group_size) {
        double min = 0.0;
        double max = 0.0;
        for (std::int64_t i = 0; i < group_size; ++i) {
          min = std::min(min, row[j0 + i]);
          max = std::max(max, row[j0 + i]);
        }
        const detail::IntGroupScale scale = detail::int_group_scale(min, max, options.format);
        for (std::int64_t i = 0; i < group_size; ++i) {
          const double value = row[j0 + i];
          rounded_error[std::size_t(n * in + j0 + i)] =
              value - scale.dequantize(scale.quantize(value));
        }
      }
    }
    std::vector<double> gptq_error(std::size_t(out * in));
    for (std::size_t i = 0; i < gptq_error.size(); ++i)
      gptq_error[i] = original[i] - dequantized[i];
    const double signal = std::max(weighted_error(original, out, in, h), 1e-300);
    report->rounded_error = weighted_error(rounded_error, out, in, h) / signal;
    report->gptq_error = weighted_error(gptq_error, out, in, h) / signal;
  }
  return q;
}

}  // namespace quire::engine::formats
