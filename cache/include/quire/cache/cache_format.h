#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace quire::cache {

// Storage formats of the KV cache. Q6 follows exllamav2: 8-bit keys with 4-bit
// values (keys are the more sensitive half). FP8 is E4M3 with a scale per page
// and head, which exllamav2's paged mode does not offer.
enum class CacheFormat : std::uint8_t { FP16, Q8, Q6, Q4, FP8 };

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
  std::string_view name;   // short, lowercase: "fp16", "q8", "q6", "q4", "fp8"
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

// All formats, in the order a settings list should offer them.
std::span<const CacheFormat> all_cache_formats();

// Accepts the short names, case-insensitively ("Q4", "fp8", ...).
std::optional<CacheFormat> parse_cache_format(std::string_view text);

}  // namespace quire::cache
