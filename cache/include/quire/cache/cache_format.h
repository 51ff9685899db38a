#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace quire::cache {

// How one half (keys or values) of the cache is coded. Q8 and Q4 are
// integers with an FP16 scale per group of 32 elements of a head; FP8 is E4M3
// with an FP32 scale per page and head, which exllamav2's paged mode does not
// offer.
enum class ElementCoding : std::uint8_t { FP16, FP8, Q8, Q4 };

// Storage format of the KV cache: keys and values coded apart, since keys are
// the more sensitive half. The named formats are the usual pairs; Q6 follows
// exllamav2 (8-bit keys with 4-bit values, "k8v4").
struct CacheFormat {
  ElementCoding key = ElementCoding::FP16;
  ElementCoding value = ElementCoding::FP16;

  static const CacheFormat FP16;
  static const CacheFormat Q8;
  static const CacheFormat Q6;
  static const CacheFormat Q4;
  static const CacheFormat FP8;

  friend bool operator==(const CacheFormat&, const CacheFormat&) = default;
};

inline constexpr CacheFormat CacheFormat::FP16{ElementCoding::FP16, ElementCoding::FP16};
inline constexpr CacheFormat CacheFormat::Q8{ElementCoding::Q8, ElementCoding::Q8};
inline constexpr CacheFormat CacheFormat::Q6{ElementCoding::Q8, ElementCoding::Q4};
inline constexpr CacheFormat CacheFormat::Q4{ElementCoding::Q4, ElementCoding::Q4};
inline constexpr CacheFormat CacheFormat::FP8{ElementCoding::FP8, ElementCoding::FP8};

enum class ScaleLayout : std::uint8_t {
  None,             // FP16: values stored as they are
  Fp16PerGroup,     // integer formats: one FP16 scale per group of consecutive elements
  Fp32PerPageHead,  // FP8: one FP32 scale per (page, head), for K and V separately
};

// How one half (K or V) of the cache is stored.
struct TensorCoding {
  int bits = 16;  // storage bits per element
  ScaleLayout scales = ScaleLayout::None;
  int group_size = 0;  // elements per scale when scales == Fp16PerGroup

  friend bool operator==(const TensorCoding&, const TensorCoding&) = default;
};

struct LayerShape {
  int kv_heads = 0;
  int head_dim = 0;
};

// Bytes of one page of one layer, by plane. Every plane is sized exactly; the
// engine allocates them as separate buffers or packed one after another.
struct PageBytes {
  std::int64_t key_data = 0;
  std::int64_t key_scales = 0;
  std::int64_t value_data = 0;
  std::int64_t value_scales = 0;

  std::int64_t total() const { return key_data + key_scales + value_data + value_scales; }
  friend bool operator==(const PageBytes&, const PageBytes&) = default;
};

struct CacheFormatInfo {
  CacheFormat format;
  // Short, lowercase: "fp16", "q8", "q6", "q4", "fp8" for the named pairs,
  // "k<key>v<value>" for the others, each half as "16", "f8", "8" or "4"
  // ("kf8v4": FP8 keys, Q4 values).
  std::string_view name;
  std::string_view title;  // for people, short: "Q4", "K FP8, V Q4"
  std::string_view label;  // for people: "Q4 — 4-bit keys and values"
  TensorCoding key;
  TensorCoding value;

  // Exact bytes of one page of one layer with this shape.
  PageBytes page_bytes(LayerShape shape, int page_size) const;

  // Exact bytes of one token's K and V in one layer, not counting per-page
  // scales (FP8 adds 8 bytes per head per page on top; page_bytes includes them).
  std::int64_t token_bytes(LayerShape shape) const;

  // Average storage bits per cached element over K and V, scales included
  // (FP16 16, Q8 8.5, Q6 6.5, Q4 4.5; FP8 8 plus its per-page scales).
  double bits_per_element() const;

  // Why this format cannot store a layer of this shape, or nothing if it can.
  std::optional<std::string> unsupported_reason(LayerShape shape) const;
};

const CacheFormatInfo& format_info(CacheFormat format);

// The named formats (FP16, Q8, Q6, Q4, FP8), in the order a list of them
// should offer them.
std::span<const CacheFormat> all_cache_formats();

// Every pair of key and value codings, the named ones first.
std::span<const CacheFormat> all_cache_format_pairs();

// The codings of one half, most exact first: FP16, FP8, Q8, Q4.
std::span<const ElementCoding> all_element_codings();

// Accepts the short names case-insensitively ("Q4", "fp8", "kf8v4"), and
// for each half of "k…v…" also the coding's own name ("kq8vq4" = "k8v4" =
// "q6", "kfp16vq4" = "k16v4").
std::optional<CacheFormat> parse_cache_format(std::string_view text);

}  // namespace quire::cache
