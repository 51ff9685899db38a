// PIL's resampling (libImaging/Resample.c), reimplemented from its published
// behaviour so that images resized here are byte for byte those that
// transformers' processors get from PIL. The details that decide single
// bytes: coefficients are computed in double, normalized to sum 1, then
// scaled by 2^22 and rounded half away from zero to int; each output value
// starts from half a unit (2^21), accumulates in int, and is shifted right by
// 22 (rounding toward minus infinity) and clipped to 0..255. Filter windows
// are rounded with (int)(x + 0.5), which truncates toward zero.

#include "quire/engine/vision/pil_resample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

namespace quire::vision {

namespace {

constexpr int kResamplePrecisionBits = 22;

struct FilterShape {
  double (*weight)(double);
  double support;
};

double box_weight(double x) {
  return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
}

double bilinear_weight(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

double hamming_weight(double x) {
  x = std::fabs(x);
  if (x == 0.0) return 1.0;
  if (x >= 1.0) return 0.0;
  x *= std::numbers::pi;
  // PIL writes these two constants as floats.
  return std::sin(x) / x * (0.54f + 0.46f * std::cos(x));
}

double bicubic_weight(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

double sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= std::numbers::pi;
  return std::sin(x) / x;
}

double lanczos_weight(double x) {
  if (-3.0 <= x && x < 3.0) return sinc(x) * sinc(x / 3);
  return 0.0;
}

FilterShape shape_of(ResampleFilter filter) {
  switch (filter) {
    case ResampleFilter::Box:
      return {box_weight, 0.5};
    case ResampleFilter::Bilinear:
      return {bilinear_weight, 1.0};
    case ResampleFilter::Hamming:
      return {hamming_weight, 1.0};
    case ResampleFilter::Bicubic:
      return {bicubic_weight, 2.0};
    case ResampleFilter::Lanczos:
      return {lanczos_weight, 3.0};
  }
  return {bilinear_weight, 1.0};
}

// For each output position along one axis: the first input index, how many
// inputs it reads, and their fixed-point weights (ksize slots each).
struct AxisWeights {
  int ksize = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<std::int32_t> weights;
};

AxisWeights axis_weights(int in_size, int out_size, const FilterShape& shape) {
  const double scale = static_cast<double>(static_cast<float>(in_size)) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = shape.support * filter_scale;
  AxisWeights axis;
  axis.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  axis.first.resize(static_cast<std::size_t>(out_size));
  axis.count.resize(static_cast<std::size_t>(out_size));
  axis.weights.assign(static_cast<std::size_t>(out_size) * static_cast<std::size_t>(axis.ksize), 0);
  std::vector<double> k(static_cast<std::size_t>(axis.ksize));
  for (int out = 0; out < out_size; ++out) {
    const double center = (out + 0.5) * scale;
    const double inverse = 1.0 / filter_scale;
    const int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    const int hi = std::min(static_cast<int>(center + support + 0.5), in_size);
    const int n = hi - lo;
    double total = 0.0;
    for (int i = 0; i < n; ++i) {
      const double w = shape.weight((i + lo - center + 0.5) * inverse);
      k[static_cast<std::size_t>(i)] = w;
      total += w;
    }
    std::int32_t* fixed =
        &axis.weights[static_cast<std::size_t>(out) * static_cast<std::size_t>(axis.ksize)];
    for (int i = 0; i < n; ++i) {
      double w = k[static_cast<std::size_t>(i)];
      if (total != 0.0) w /= total;
      const double scaled = w * (1 << kResamplePrecisionBits);
      fixed[i] = static_cast<std::int32_t>(w < 0 ? -0.5 + scaled : 0.5 + scaled);
    }
    axis.first[static_cast<std::size_t>(out)] = lo;
    axis.count[static_cast<std::size_t>(out)] = n;
  }
  return axis;
}

std::uint8_t clip_fixed(std::int32_t sum) {
  // An arithmetic shift, as PIL's: negative sums round toward minus infinity.
  const std::int32_t value = sum >> kResamplePrecisionBits;
  return static_cast<std::uint8_t>(std::clamp<std::int32_t>(value, 0, 255));
}

// Resamples rows [row_begin, row_end) of `in` along x into a new image.
RgbImage horizontal_pass(const RgbImage& in, int row_begin, int row_end, int out_width,
                         const AxisWeights& axis) {
  RgbImage out;
  out.width = out_width;
  out.height = row_end - row_begin;
  out.rgb.resize(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height) * 3);
  const auto in_stride = static_cast<std::size_t>(in.width) * 3;
  for (int y = 0; y < out.height; ++y) {
    const std::uint8_t* row = &in.rgb[static_cast<std::size_t>(y + row_begin) * in_stride];
    std::uint8_t* dst =
        &out.rgb[static_cast<std::size_t>(y) * static_cast<std::size_t>(out_width) * 3];
    for (int x = 0; x < out_width; ++x) {
      const std::int32_t* k =
          &axis.weights[static_cast<std::size_t>(x) * static_cast<std::size_t>(axis.ksize)];
      const std::uint8_t* src =
          row + static_cast<std::size_t>(axis.first[static_cast<std::size_t>(x)]) * 3;
      std::int32_t r = 1 << (kResamplePrecisionBits - 1);
      std::int32_t g = r;
      std::int32_t b = r;
      for (int i = 0; i < axis.count[static_cast<std::size_t>(x)]; ++i) {
        r += src[i * 3 + 0] * k[i];
        g += src[i * 3 + 1] * k[i];
        b += src[i * 3 + 2] * k[i];
      }
      dst[x * 3 + 0] = clip_fixed(r);
      dst[x * 3 + 1] = clip_fixed(g);
      dst[x * 3 + 2] = clip_fixed(b);
    }
  }
  return out;
}

// Resamples `in` along y; the axis' first rows are relative to `in`.
RgbImage vertical_pass(const RgbImage& in, int out_height, const AxisWeights& axis,
                       int row_offset) {
  RgbImage out;
  out.width = in.width;
  out.height = out_height;
  const auto stride = static_cast<std::size_t>(in.width) * 3;
  out.rgb.resize(stride * static_cast<std::size_t>(out_height));
  for (int y = 0; y < out_height; ++y) {
    const std::int32_t* k =
        &axis.weights[static_cast<std::size_t>(y) * static_cast<std::size_t>(axis.ksize)];
    const int first = axis.first[static_cast<std::size_t>(y)] - row_offset;
    const int n = axis.count[static_cast<std::size_t>(y)];
    std::uint8_t* dst = &out.rgb[static_cast<std::size_t>(y) * stride];
    for (std::size_t c = 0; c < stride; ++c) {
      std::int32_t sum = 1 << (kResamplePrecisionBits - 1);
      for (int i = 0; i < n; ++i)
        sum += in.rgb[static_cast<std::size_t>(first + i) * stride + c] * k[i];
      dst[c] = clip_fixed(sum);
    }
  }
  return out;
}

}  // namespace

ResampleFilter resample_filter_from_pil(int code) {
  switch (code) {
    case 1:
      return ResampleFilter::Lanczos;
    case 2:
      return ResampleFilter::Bilinear;
    case 3:
      return ResampleFilter::Bicubic;
    case 4:
      return ResampleFilter::Box;
    case 5:
      return ResampleFilter::Hamming;
    default:
      throw ImageError("resampling filter " + std::to_string(code) +
                       " is not supported; Quire resizes with PIL's LANCZOS (1), BILINEAR (2), "
                       "BICUBIC (3), BOX (4) and HAMMING (5)");
  }
}

std::string resample_filter_name(ResampleFilter filter) {
  switch (filter) {
    case ResampleFilter::Lanczos:
      return "LANCZOS";
    case ResampleFilter::Bilinear:
      return "BILINEAR";
    case ResampleFilter::Bicubic:
      return "BICUBIC";
    case ResampleFilter::Box:
      return "BOX";
    case ResampleFilter::Hamming:
      return "HAMMING";
  }
  return "unknown";
}

RgbImage resize_like_pil(const RgbImage& image, int width, int height, ResampleFilter filter) {
  check_rgb_image(image);
  if (width < 1 || height < 1)
    throw ImageError("cannot resize an image to " + std::to_string(width) + "x" +
                     std::to_string(height) + " pixels");
  if (width == image.width && height == image.height) return image;
  const FilterShape shape = shape_of(filter);
  const AxisWeights vertical = axis_weights(image.height, height, shape);
  // Only the rows the vertical pass reads are resampled horizontally.
  const int row_begin = vertical.first.front();
  const int row_end = vertical.first.back() + vertical.count.back();
  if (width == image.width) return vertical_pass(image, height, vertical, 0);
  const AxisWeights horizontal = axis_weights(image.width, width, shape);
  RgbImage narrowed = horizontal_pass(image, row_begin, row_end, width, horizontal);
  if (height == image.height) return narrowed;
  return vertical_pass(narrowed, height, vertical, row_begin);
}

}  // namespace quire::vision
