#pragma once

// Private to the CPU backend: addressing of one layer's K/V planes.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "quire/kernels/backend.h"

namespace quire::kernels::cpu_kv {

inline int data_bits(KvCoding coding) {
  switch (coding) {
    case KvCoding::Fp16:
      return 16;
    case KvCoding::Int8:
    case KvCoding::Fp8:
      return 8;
    case KvCoding::Int4:
      return 4;
  }
  return 0;
}

inline bool is_integer(KvCoding coding) {
  return coding == KvCoding::Int8 || coding == KvCoding::Int4;
}

// One of K or V of a layer.
struct Plane {
  KvCoding coding = KvCoding::Fp16;
  std::uint8_t* data = nullptr;
  std::uint8_t* scales = nullptr;
  std::int64_t data_page_bytes = 0;
  std::int64_t scale_page_bytes = 0;
  int kv_heads = 0;
  int head_dim = 0;
  const float* calibrated = nullptr;  // FP8: kv_heads fixed scales; null: dynamic

  std::size_t head_bytes() const {
    return static_cast<std::size_t>(head_dim) * static_cast<std::size_t>(data_bits(coding)) / 8;
  }
  // Integer formats: FP16 scales per 32 elements of each token and head.
  std::size_t head_scale_bytes() const {
    return is_integer(coding) ? static_cast<std::size_t>(head_dim / 32) * 2 : 0;
  }
  std::uint8_t* head_data(int page, int slot, int head) const {
    return data + page * data_page_bytes +
           (static_cast<std::size_t>(slot) * kv_heads + static_cast<std::size_t>(head)) *
               head_bytes();
  }
  std::uint16_t* head_scales(int page, int slot, int head) const {
    return reinterpret_cast<std::uint16_t*>(
        scales + page * scale_page_bytes +
        (static_cast<std::size_t>(slot) * kv_heads + static_cast<std::size_t>(head)) *
            head_scale_bytes());
  }
  // FP8: one FP32 scale per head and page.
  float* page_scale(int page, int head) const {
    return reinterpret_cast<float*>(scales + page * scale_page_bytes) + head;
  }
};

inline Plane key_plane(const KvLayerView& view) {
  const KvLayerLayout& l = view.layout;
  return Plane{l.key_coding,
               static_cast<std::uint8_t*>(view.planes.key_data),
               static_cast<std::uint8_t*>(view.planes.key_scales),
               l.key_data_page_bytes,
               l.key_scale_page_bytes,
               l.kv_heads,
               l.head_dim,
               view.calibrated.key};
}

inline Plane value_plane(const KvLayerView& view) {
  const KvLayerLayout& l = view.layout;
  return Plane{l.value_coding,
               static_cast<std::uint8_t*>(view.planes.value_data),
               static_cast<std::uint8_t*>(view.planes.value_scales),
               l.value_data_page_bytes,
               l.value_scale_page_bytes,
               l.kv_heads,
               l.head_dim,
               view.calibrated.value};
}

// The page and slot of token t of a batch.
struct Slot {
  int page = 0;
  int slot = 0;
};

inline Slot slot_of(const TokenBatch& batch, int page_size, int num_pages, std::int64_t t) {
  const std::int32_t position = batch.positions[t];
  const std::int32_t sequence = batch.token_sequence[t];
  const int index = position / page_size;
  if (position < 0 || index >= batch.max_pages) {
    throw std::out_of_range("position " + std::to_string(position) +
                            " lies outside the sequence's page table");
  }
  const std::int32_t page =
      batch.block_tables[static_cast<std::int64_t>(sequence) * batch.max_pages + index];
  if (page < 0 || page >= num_pages) {
    throw std::out_of_range("page table entry " + std::to_string(page) + " is not a page");
  }
  return Slot{page, position % page_size};
}

}  // namespace quire::kernels::cpu_kv
