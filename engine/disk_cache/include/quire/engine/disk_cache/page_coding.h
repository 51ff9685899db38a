#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "quire/cache/cache_format.h"

namespace quire::engine::disk_cache {

// How a page's K/V bytes are coded: everything besides the model that decides
// what the bytes of a page mean. Two pages with the same hash and model are
// interchangeable only under the same coding.
// Each layer's cache::PageBytes gives its planes' bytes in one page, as
// KvStorage holds them (kernels::KvLayerLayout's *_page_bytes); a plane of 0
// bytes is absent (FP16 halves have no scales).
struct PageCoding {
  // Bumped whenever Quire's forward pass or cache quantizers change the K/V
  // bytes they write for the same model and tokens, so pages written by an
  // older build are refused ("other coding") rather than trusted.
  static constexpr std::uint32_t kCurrentProducer = 1;

  std::uint32_t producer = kCurrentProducer;
  cache::CacheFormat format;
  int page_size = 0;
  std::vector<cache::PageBytes> layers;

  PageCoding() = default;
  PageCoding(cache::CacheFormat format_, int page_size_, std::vector<cache::PageBytes> layers_)
      : format(format_), page_size(page_size_), layers(std::move(layers_)) {}

  // The coding of a cache in `format` over layers of these shapes, with the
  // planes sized as KvStorage sizes them (cache::format_info's page_bytes:
  // key data, key scales, value data, value scales, in that order).
  static PageCoding of(cache::CacheFormat format, int page_size,
                       std::span<const cache::LayerShape> layers);

  // Bytes of one page across every layer: the payload of a page file.
  std::int64_t page_bytes() const;

  // Throws std::invalid_argument naming the field when a size is not
  // positive (page size, layer count, a data plane) or a scale plane is
  // negative.
  void check() const;

  // A folder name for pages of this coding: the format's short name, the
  // page size and 8 bytes of blake2b over every field, e.g. "q6-256-1f3a…".
  // Two codings that differ in any field have different keys.
  std::string key() const;

  // "Q8/Q4, 256-token pages, 24 layers, 3,145,728 bytes a page, producer 1".
  std::string describe() const;

  friend bool operator==(const PageCoding&, const PageCoding&) = default;
};

}  // namespace quire::engine::disk_cache
