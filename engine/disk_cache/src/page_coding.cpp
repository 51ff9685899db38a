#include "quire/engine/disk_cache/page_coding.h"

#include <blake2.h>

#include <stdexcept>
#include <string>

namespace quire::engine::disk_cache {

PageCoding PageCoding::of(cache::CacheFormat format, int page_size,
                          std::span<const cache::LayerShape> layers) {
  const cache::CacheFormatInfo& info = cache::format_info(format);
  std::vector<cache::PageBytes> bytes;
  bytes.reserve(layers.size());
  for (const cache::LayerShape& shape : layers)
    bytes.push_back(info.page_bytes(shape, page_size));
  return PageCoding(format, page_size, std::move(bytes));
}

std::int64_t PageCoding::page_bytes() const {
  std::int64_t total = 0;
  for (const cache::PageBytes& layer : layers)
    total += layer.total();
  return total;
}

void PageCoding::check() const {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("disk cache page coding: " + what);
  };
  if (page_size <= 0) fail("the page size must be positive, not " + std::to_string(page_size));
  if (layers.empty()) fail("a page needs at least one layer");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const cache::PageBytes& layer = layers[i];
    if (layer.key_data <= 0 || layer.value_data <= 0 || layer.key_scales < 0 ||
        layer.value_scales < 0)
      fail("layer " + std::to_string(i) + " has a plane of impossible size (key data " +
           std::to_string(layer.key_data) + ", key scales " + std::to_string(layer.key_scales) +
           ", value data " + std::to_string(layer.value_data) + ", value scales " +
           std::to_string(layer.value_scales) + " bytes)");
  }
}

std::string PageCoding::key() const {
  std::vector<std::uint8_t> fields;
  const auto put = [&fields](std::uint64_t value) {
    for (int i = 0; i < 8; ++i)
      fields.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  };
  put(producer);
  put(static_cast<std::uint64_t>(format.key));
  put(static_cast<std::uint64_t>(format.value));
  put(static_cast<std::uint64_t>(page_size));
  put(layers.size());
  for (const cache::PageBytes& layer : layers)
    for (const std::int64_t bytes :
         {layer.key_data, layer.key_scales, layer.value_data, layer.value_scales})
      put(static_cast<std::uint64_t>(bytes));
  std::uint8_t digest[8];
  if (blake2b(digest, fields.data(), nullptr, sizeof digest, fields.size(), 0) != 0)
    throw std::runtime_error("blake2b failed");
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text =
      std::string(cache::format_info(format).name) + "-" + std::to_string(page_size) + "-";
  for (const std::uint8_t b : digest) {
    text.push_back(kDigits[b >> 4]);
    text.push_back(kDigits[b & 15]);
  }
  return text;
}

std::string PageCoding::describe() const {
  return std::string(cache::format_info(format).title) + ", " + std::to_string(page_size) +
         "-token pages, " + std::to_string(layers.size()) + " layers, " +
         std::to_string(page_bytes()) + " bytes a page, producer " + std::to_string(producer);
}

}  // namespace quire::engine::disk_cache
