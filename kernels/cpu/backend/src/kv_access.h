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
  // KvMirrors: FP16 pages of the residual window, in the stored domain.
  std::uint8_t* mirror = nullptr;
  std::int64_t mirror_page_bytes = 0;
  int mirror_slots = 0;

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
  // A token's FP16 head vector in a mirror slot.
  std::uint16_t* mirror_head(int slot, int token, int head) const {
    return reinterpret_cast<std::uint16_t*>(mirror + slot * mirror_page_bytes) +
           (static_cast<std::size_t>(token) * kv_heads + static_cast<std::size_t>(head)) *
               static_cast<std::size_t>(head_dim);
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
               view.calibrated.key,
               static_cast<std::uint8_t*>(view.mirrors.key),
               kv_mirror_page_bytes(l.page_size, l.kv_heads, l.head_dim),
               view.mirrors.slot_count};
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
               view.calibrated.value,
               static_cast<std::uint8_t*>(view.mirrors.value),
               kv_mirror_page_bytes(l.page_size, l.kv_heads, l.head_dim),
               view.mirrors.slot_count};
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

// A sequence's mirrored page (TokenBatch::mirrored): its index in the page
// table and its mirror slot; index -1 for none, or where the view has no
// mirrors.
struct Mirrored {
  int index = -1;
  int slot = 0;
};

// `slots`: the view's mirror slots (KvMirrors::slot_count, Plane::mirror_slots).
inline Mirrored mirrored_of(const TokenBatch& batch, int slots, std::int32_t sequence) {
  if (batch.mirrored == nullptr || slots <= 0) return Mirrored{};
  const std::int32_t index = batch.mirrored[std::int64_t{sequence} * 2];
  const std::int32_t slot = batch.mirrored[std::int64_t{sequence} * 2 + 1];
  if (index < 0) return Mirrored{};
  if (index >= batch.max_pages || slot < 0 || slot >= slots) {
    throw std::out_of_range("mirror (page " + std::to_string(index) + ", slot " +
                            std::to_string(slot) + ") lies outside the page table or the mirrors");
  }
  return Mirrored{index, slot};
}

// Throws std::out_of_range, before any work, when a token's sequence names a
// mirror outside the page table or the view's slots.
inline void check_mirrored(const TokenBatch& batch, int slots) {
  if (batch.mirrored == nullptr || slots <= 0) return;
  for (std::int64_t t = 0; t < batch.tokens; ++t)
    mirrored_of(batch, slots, batch.token_sequence[t]);
}

}  // namespace quire::kernels::cpu_kv
