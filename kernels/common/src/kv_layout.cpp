#include "quire/kernels/kv_layout.h"

#include <stdexcept>
#include <string>

namespace quire::kernels {

void check_kv_layout(const KvLayerLayout& layout) {
  if (layout.page_size <= 0 || layout.kv_heads <= 0 || layout.head_dim <= 0 ||
      layout.num_pages <= 0) {
    throw std::invalid_argument(
        "K/V layout: page size, heads, head_dim and pages must be positive");
  }
  const auto integer = [](KvCoding coding) {
    return coding == KvCoding::Int8 || coding == KvCoding::Int4;
  };
  if ((integer(layout.key_coding) || integer(layout.value_coding)) && layout.head_dim % 32) {
    throw std::invalid_argument("quantized K/V needs head_dim divisible by 32");
  }
  const KvLayerLayout wanted =
      make_kv_layout(layout.key_coding, layout.value_coding, layout.page_size, layout.kv_heads,
                     layout.head_dim, layout.num_pages);
  const auto expect = [](std::int64_t actual, std::int64_t needed, const char* what) {
    if (actual != needed) {
      throw std::invalid_argument(std::string("K/V layout: ") + what + " is " +
                                  std::to_string(actual) + " bytes per page, expected " +
                                  std::to_string(needed));
    }
  };
  expect(layout.key_data_page_bytes, wanted.key_data_page_bytes, "key data");
  expect(layout.value_data_page_bytes, wanted.value_data_page_bytes, "value data");
  expect(layout.key_scale_page_bytes, wanted.key_scale_page_bytes, "key scales");
  expect(layout.value_scale_page_bytes, wanted.value_scale_page_bytes, "value scales");
}

}  // namespace quire::kernels
