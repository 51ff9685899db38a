#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats {

// A weight of another format rewritten into GPTQ's layout at load (AWQ,
// compressed-tensors' pack-quantized and naive int8), exactly: every weight
// dequantizes to the same value as in the file. Host memory, [G, N] scales
// in the file's dtype (GptqLayout::scale_dtype).
struct GptqRepacked {
  std::vector<std::uint32_t> qweight;  // [K / P, N]
  std::vector<std::uint32_t> qzeros;   // [G, N / P]; empty when symmetric
  std::vector<std::byte> scales;       // [G, N]
};

// A weight descriptor over the repacked tensors and layout.g_idx, for the
// CPU backend; both must outlive it.
kernels::LinearWeight host_linear_weight(const GptqLayout& layout, const GptqRepacked& packed,
                                         const std::optional<TensorView>& bias);

namespace detail {

// ORs `value` (unsigned, below 2^bits) in as element `index` of a run of
// `bits`-wide values packed low bits first: bits * (index % P) of word
// index / P, P = 32 / bits.
inline void pack_value(std::uint32_t* words, std::int64_t index, std::uint32_t value, int bits) {
  const int per_word = 32 / bits;
  words[index / per_word] |= value << (bits * (index % per_word));
}

}  // namespace detail
}  // namespace quire::engine::formats
