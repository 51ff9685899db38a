#include "quire/cache/cache_format.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

namespace quire::cache {
namespace {

// Integer formats rotate and scale groups of 32 consecutive elements of one head.
constexpr int kQuantGroup = 32;

constexpr TensorCoding kFp16{16, ScaleLayout::None, 0};
constexpr TensorCoding kInt8{8, ScaleLayout::Fp16PerGroup, kQuantGroup};
constexpr TensorCoding kInt4{4, ScaleLayout::Fp16PerGroup, kQuantGroup};
constexpr TensorCoding kFloat8{8, ScaleLayout::Fp32PerPageHead, 0};

const std::array<CacheFormatInfo, 5> kFormats{{
    {CacheFormat::FP16, "fp16", "FP16 — full precision", kFp16, kFp16},
    {CacheFormat::Q8, "q8", "Q8 — 8-bit keys and values", kInt8, kInt8},
    {CacheFormat::Q6, "q6", "Q6 — 8-bit keys, 4-bit values", kInt8, kInt4},
    {CacheFormat::Q4, "q4", "Q4 — 4-bit keys and values", kInt4, kInt4},
    {CacheFormat::FP8, "fp8", "FP8 — E4M3 with a scale per page and head", kFloat8, kFloat8},
}};

constexpr std::array<CacheFormat, 5> kOrder{CacheFormat::FP16, CacheFormat::Q8, CacheFormat::Q6,
                                            CacheFormat::Q4, CacheFormat::FP8};

std::int64_t data_bytes(const TensorCoding& coding, std::int64_t elements) {
  return elements * coding.bits / 8;
}

std::int64_t scale_bytes(const TensorCoding& coding, LayerShape shape, int page_size) {
  const std::int64_t elements = std::int64_t{page_size} * shape.kv_heads * shape.head_dim;
  switch (coding.scales) {
    case ScaleLayout::None:
      return 0;
    case ScaleLayout::Fp16PerGroup:
      return elements / coding.group_size * 2;
    case ScaleLayout::Fp32PerPageHead:
      return std::int64_t{shape.kv_heads} * 4;
  }
  return 0;
}

double coding_bits(const TensorCoding& coding) {
  if (coding.scales == ScaleLayout::Fp16PerGroup) return coding.bits + 16.0 / coding.group_size;
  return coding.bits;
}

}  // namespace

PageBytes CacheFormatInfo::page_bytes(LayerShape shape, int page_size) const {
  const std::int64_t elements = std::int64_t{page_size} * shape.kv_heads * shape.head_dim;
  return PageBytes{data_bytes(key, elements), scale_bytes(key, shape, page_size),
                   data_bytes(value, elements), scale_bytes(value, shape, page_size)};
}

std::int64_t CacheFormatInfo::token_bytes(LayerShape shape) const {
  const std::int64_t elements = std::int64_t{shape.kv_heads} * shape.head_dim;
  auto per_token = [&](const TensorCoding& coding) {
    std::int64_t bytes = data_bytes(coding, elements);
    if (coding.scales == ScaleLayout::Fp16PerGroup) bytes += elements / coding.group_size * 2;
    return bytes;
  };
  return per_token(key) + per_token(value);
}

double CacheFormatInfo::bits_per_element() const {
  return (coding_bits(key) + coding_bits(value)) / 2.0;
}

std::optional<std::string> CacheFormatInfo::unsupported_reason(LayerShape shape) const {
  if (shape.kv_heads <= 0 || shape.head_dim <= 0) {
    return "the layer has no key/value heads (kv_heads " + std::to_string(shape.kv_heads) +
           ", head_dim " + std::to_string(shape.head_dim) + ")";
  }
  for (const TensorCoding* coding : {&key, &value}) {
    if (coding->scales == ScaleLayout::Fp16PerGroup && shape.head_dim % coding->group_size != 0) {
      return "the " + std::string(name) + " cache quantizes groups of " +
             std::to_string(coding->group_size) + " elements within a head, but this model's " +
             "head_dim is " + std::to_string(shape.head_dim) + "; choose the fp16 or fp8 cache";
    }
  }
  return std::nullopt;
}

const CacheFormatInfo& format_info(CacheFormat format) {
  for (const CacheFormatInfo& info : kFormats) {
    if (info.format == format) return info;
  }
  throw std::invalid_argument("unknown cache format");
}

std::span<const CacheFormat> all_cache_formats() {
  return kOrder;
}

std::optional<CacheFormat> parse_cache_format(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const CacheFormatInfo& info : kFormats) {
    if (info.name == lower) return info.format;
  }
  return std::nullopt;
}

}  // namespace quire::cache
