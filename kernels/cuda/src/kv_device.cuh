#pragma once

// Device-side addressing of paged K/V (kv_layout.h): where a token's head
// vector lives, shared by the K/V writes and the attention kernels.

#include <cstdint>

#include "kv_ops.h"

namespace quire::kernels::cuda::kv_device {

// The page and slot of a position of sequence `sequence`; page -1 when the
// position or its page-table entry names no page.
struct Slot {
  int page = -1;
  int slot = 0;
};

__device__ inline Slot slot_at(const BatchArgs& batch, int page_size, int num_pages,
                               std::int32_t sequence, std::int32_t position) {
  if (position < 0) return Slot{};
  const int index = position / page_size;
  if (index >= batch.max_pages) return Slot{};
  const std::int32_t page =
      batch.block_tables[static_cast<std::int64_t>(sequence) * batch.max_pages + index];
  if (page < 0 || page >= num_pages) return Slot{};
  return Slot{page, position % page_size};
}

// Where attention reads a position: its page, or, for the page a sequence
// has mirrored (BatchArgs::mirrored), page num_pages + its mirror slot.
__device__ inline Slot read_slot_at(const BatchArgs& batch, int page_size, int num_pages,
                                    int mirror_slots, std::int32_t sequence,
                                    std::int32_t position) {
  Slot at = slot_at(batch, page_size, num_pages, sequence, position);
  if (at.page < 0 || batch.mirrored == nullptr || mirror_slots <= 0) return at;
  const std::int32_t index = batch.mirrored[static_cast<std::int64_t>(sequence) * 2];
  const std::int32_t slot = batch.mirrored[static_cast<std::int64_t>(sequence) * 2 + 1];
  if (index == position / page_size && slot >= 0 && slot < mirror_slots) {
    at.page = num_pages + slot;
  }
  return at;
}

// A plane's mirrors as a plane of FP16 pages, for the same addressing.
__device__ inline KvPlaneArgs mirror_plane(const KvPlaneArgs& plane) {
  KvPlaneArgs mirror;
  mirror.data = plane.mirror;
  mirror.data_page_bytes = plane.mirror_page_bytes;
  mirror.coding = KvCoding::Fp16;
  return mirror;
}

__device__ inline Slot slot_of_token(const BatchArgs& batch, int page_size, int num_pages,
                                     std::int64_t token) {
  return slot_at(batch, page_size, num_pages, batch.token_sequence[token], batch.positions[token]);
}

// Bits per stored element of a coding.
__host__ __device__ constexpr int data_bits(KvCoding coding) {
  return coding == KvCoding::Fp16 ? 16 : coding == KvCoding::Int4 ? 4 : 8;
}

// The first byte of a token's head vector, and (integer codings) of its FP16
// scales, one per 32 elements; FP8 pages hold one FP32 scale per head.
__device__ inline std::uint8_t* head_data(const KvPlaneArgs& plane, int kv_heads, int head_dim,
                                          int page, int slot, int head) {
  const std::int64_t row = static_cast<std::int64_t>(slot) * kv_heads + head;
  return plane.data + page * plane.data_page_bytes + row * head_dim * data_bits(plane.coding) / 8;
}

__device__ inline std::uint16_t* head_scales(const KvPlaneArgs& plane, int kv_heads, int head_dim,
                                             int page, int slot, int head) {
  const std::int64_t row = static_cast<std::int64_t>(slot) * kv_heads + head;
  return reinterpret_cast<std::uint16_t*>(plane.scales + page * plane.scale_page_bytes) +
         row * (head_dim / 32);
}

__device__ inline float* page_scale(const KvPlaneArgs& plane, int page, int head) {
  return reinterpret_cast<float*>(plane.scales + page * plane.scale_page_bytes) + head;
}

}  // namespace quire::kernels::cuda::kv_device
