#pragma once

// Cache pages of one layer in host memory for the CPU backend's K/V tests, and
// an independent decoder of what the backend stored.

#include <cstdint>
#include <vector>

#include "quire/kernels/kv_layout.h"

namespace quire::test {

struct KvStorage {
  kernels::KvLayerView view;
  std::vector<std::uint8_t> key_data, key_scales, value_data, value_scales;

  // Every byte starts as 0x5a, so that reading an unwritten slot shows.
  explicit KvStorage(const kernels::KvLayerLayout& layout);
};

// One stored head vector of K (key) or V, decoded without the backend.
std::vector<float> decode_stored(const KvStorage& storage, bool key, int page, int slot, int head);

// The same in the stored domain: integer codings' groups as their levels
// times their step, not rotated back; other codings as decode_stored.
std::vector<float> decode_stored_domain(const KvStorage& storage, bool key, int page, int slot,
                                        int head);

}  // namespace quire::test
