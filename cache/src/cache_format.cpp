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

struct CodingNames {
  ElementCoding coding;
  std::string_view name;   // "q4": the coding on its own, as in "kq8vq4"
  std::string_view digit;  // "4": the coding in "k8v4"
  std::string_view label;  // "Q4"
  std::string_view bits;   // "4-bit", for a label's explanation
  TensorCoding tensor;
};

constexpr std::array<CodingNames, 4> kCodings{{
    {ElementCoding::FP16, "fp16", "16", "FP16", "FP16", kFp16},
    {ElementCoding::FP8, "fp8", "f8", "FP8", "FP8", kFloat8},
    {ElementCoding::Q8, "q8", "8", "Q8", "8-bit", kInt8},
    {ElementCoding::Q4, "q4", "4", "Q4", "4-bit", kInt4},
}};

const CodingNames& names_of(ElementCoding coding) {
  for (const CodingNames& names : kCodings) {
    if (names.coding == coding) return names;
  }
  throw std::invalid_argument("unknown cache coding");
}

struct Named {
  CacheFormat format;
  std::string_view name;
  std::string_view title;
  std::string_view label;
};

constexpr std::array<Named, 5> kNamed{{
    {CacheFormat::FP16, "fp16", "FP16", "FP16 — full precision"},
    {CacheFormat::Q8, "q8", "Q8", "Q8 — 8-bit keys and values"},
    {CacheFormat::Q6, "q6", "Q6", "Q6 — 8-bit keys, 4-bit values"},
    {CacheFormat::Q4, "q4", "Q4", "Q4 — 4-bit keys and values"},
    {CacheFormat::FP8, "fp8", "FP8", "FP8 — E4M3 with a scale per page and head"},
}};

// Every pair, named ones first, with names and labels that live as long as
// the program (CacheFormatInfo holds views of them).
struct Table {
  std::array<CacheFormat, 5> named;
  std::array<CacheFormat, 16> pairs;
  std::array<ElementCoding, 4> codings;
  std::array<std::string, 16> names;
  std::array<std::string, 16> titles;
  std::array<std::string, 16> labels;
  std::array<CacheFormatInfo, 16> infos;

  Table() {
    std::size_t next = 0;
    for (std::size_t i = 0; i < kNamed.size(); ++i) {
      named[i] = kNamed[i].format;
      add(next++, kNamed[i].format, std::string(kNamed[i].name), std::string(kNamed[i].title),
          std::string(kNamed[i].label));
    }
    for (std::size_t i = 0; i < kCodings.size(); ++i)
      codings[i] = kCodings[i].coding;
    for (const CodingNames& key : kCodings) {
      for (const CodingNames& value : kCodings) {
        const CacheFormat format{key.coding, value.coding};
        if (std::find(named.begin(), named.end(), format) != named.end()) continue;
        const std::string title = "K " + std::string(key.label) + ", V " + std::string(value.label);
        add(next++, format, "k" + std::string(key.digit) + "v" + std::string(value.digit), title,
            title + " — " + std::string(key.bits) + " keys, " + std::string(value.bits) +
                " values");
      }
    }
  }

  void add(std::size_t at, CacheFormat format, std::string name, std::string title,
           std::string label) {
    pairs[at] = format;
    names[at] = std::move(name);
    titles[at] = std::move(title);
    labels[at] = std::move(label);
    infos[at] = CacheFormatInfo{format,
                                names[at],
                                titles[at],
                                labels[at],
                                names_of(format.key).tensor,
                                names_of(format.value).tensor};
  }
};

const Table& table() {
  static const Table instance;
  return instance;
}

std::string lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

std::optional<ElementCoding> parse_half(std::string_view text) {
  for (const CodingNames& names : kCodings) {
    if (text == names.name || text == names.digit) return names.coding;
  }
  return std::nullopt;
}

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
  for (const CacheFormatInfo& info : table().infos) {
    if (info.format == format) return info;
  }
  throw std::invalid_argument("unknown cache format");
}

std::span<const CacheFormat> all_cache_formats() {
  return table().named;
}

std::span<const CacheFormat> all_cache_format_pairs() {
  return table().pairs;
}

std::span<const ElementCoding> all_element_codings() {
  return table().codings;
}

std::optional<CacheFormat> parse_cache_format(std::string_view text) {
  const std::string lower = lowercase(text);
  for (const CacheFormatInfo& info : table().infos) {
    if (info.name == lower) return info.format;
  }
  // "k<key>v<value>": the value's part starts at the last 'v' (no coding's
  // name contains one).
  const std::size_t v = lower.rfind('v');
  if (lower.size() < 4 || lower.front() != 'k' || v == std::string::npos || v < 2) {
    return std::nullopt;
  }
  const std::optional<ElementCoding> key = parse_half(std::string_view(lower).substr(1, v - 1));
  const std::optional<ElementCoding> value = parse_half(std::string_view(lower).substr(v + 1));
  if (!key || !value) return std::nullopt;
  return CacheFormat{*key, *value};
}

}  // namespace quire::cache
