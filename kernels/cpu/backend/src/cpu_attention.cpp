// Causal attention over paged K/V in every cache format.
//
// Integer pages hold each 32-element group rotated by an orthonormal Hadamard
// transform H. Since H is symmetric and its own inverse, q . (H r) = (H q) . r
// and sum_j p_j (H r_j) = H (sum_j p_j r_j): the query is rotated once, scores
// and the weighted sum of values are taken on the stored levels directly, and
// the sum is rotated back once at the end. No page is ever expanded.

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "kv_access.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/fp8.h"
#include "quire/kernels/cpu/hadamard.h"
#include "quire/kernels/cpu/half.h"

namespace quire::kernels {
namespace {

using cpu_kv::Plane;

const std::array<float, 256>& e4m3_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> values{};
    for (int code = 0; code < 256; ++code)
      values[std::size_t(code)] = e4m3_to_float(std::uint8_t(code));
    return values;
  }();
  return table;
}

// Decodes one token's head vector, in the rotated domain for integer codings.
void load_head(const Plane& plane, int page, int slot, int head, float* out) {
  const std::uint8_t* data = plane.head_data(page, slot, head);
  const int dim = plane.head_dim;
  switch (plane.coding) {
    case KvCoding::Fp16: {
      const auto* values = reinterpret_cast<const std::uint16_t*>(data);
      for (int i = 0; i < dim; ++i)
        out[i] = half_to_float(values[i]);
      return;
    }
    case KvCoding::Fp8: {
      const std::array<float, 256>& table = e4m3_table();
      const float scale = *plane.page_scale(page, head);
      for (int i = 0; i < dim; ++i)
        out[i] = table[data[i]] * scale;
      return;
    }
    case KvCoding::Int8:
    case KvCoding::Int4: {
      const std::uint16_t* scales = plane.head_scales(page, slot, head);
      const bool four = plane.coding == KvCoding::Int4;
      const float middle = four ? 8.0f : 128.0f;
      for (int g = 0; g < dim / 32; ++g) {
        const float step = half_to_float(scales[g]) / middle;
        float* target = out + g * 32;
        if (four) {
          const std::uint8_t* bytes = data + g * 16;
          for (int i = 0; i < 16; ++i) {
            target[2 * i] = (static_cast<float>(bytes[i] & 0xf) - middle) * step;
            target[2 * i + 1] = (static_cast<float>(bytes[i] >> 4) - middle) * step;
          }
        } else {
          const std::uint8_t* bytes = data + g * 32;
          for (int i = 0; i < 32; ++i)
            target[i] = (static_cast<float>(bytes[i]) - middle) * step;
        }
      }
      return;
    }
  }
}

void rotate_groups(float* values, int dim) {
  for (int g = 0; g < dim / 32; ++g)
    hadamard32(values + g * 32);
}

}  // namespace

void CpuBackend::paged_attention(int device, const KvLayerView& layer, const TokenBatch& batch,
                                 const float* query, const AttentionParams& params, float* out) {
  check_device(device);
  const KvLayerLayout& layout = layer.layout;
  cpu_kv::check_layout(layout);
  if (params.heads <= 0 || params.heads % layout.kv_heads != 0) {
    throw std::invalid_argument("query heads must be a multiple of the K/V heads");
  }
  const Plane keys = cpu_kv::key_plane(layer);
  const Plane values = cpu_kv::value_plane(layer);
  const int dim = layout.head_dim;
  const int group = params.heads / layout.kv_heads;
  const bool rotated_keys = cpu_kv::is_integer(keys.coding);
  const bool rotated_values = cpu_kv::is_integer(values.coding);

  pool_.parallel_for(batch.tokens * params.heads, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> q(static_cast<std::size_t>(dim)), k(static_cast<std::size_t>(dim)),
        v(static_cast<std::size_t>(dim)), accumulator(static_cast<std::size_t>(dim));
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t t = item / params.heads;
      const int head = static_cast<int>(item % params.heads);
      const int kv_head = head / group;
      const std::int32_t position = batch.positions[t];
      const std::int32_t sequence = batch.token_sequence[t];
      const std::int32_t* table = batch.block_tables + std::int64_t{sequence} * batch.max_pages;
      const std::int32_t first =
          params.sliding_window > 0 ? std::max(0, position - params.sliding_window + 1) : 0;
      if (position / layout.page_size >= batch.max_pages) {
        throw std::out_of_range("position " + std::to_string(position) +
                                " lies outside the sequence's page table");
      }

      const float* source = query + (t * params.heads + head) * dim;
      std::copy(source, source + dim, q.begin());
      if (rotated_keys) rotate_groups(q.data(), dim);
      std::fill(accumulator.begin(), accumulator.end(), 0.0f);
      float running_max = -std::numeric_limits<float>::infinity();
      float total = 0.0f;

      for (std::int32_t j = first; j <= position; ++j) {
        const int page = table[j / layout.page_size];
        if (page < 0 || page >= layout.num_pages) {
          throw std::out_of_range("page table entry " + std::to_string(page) + " is not a page");
        }
        const int slot = j % layout.page_size;
        load_head(keys, page, slot, kv_head, k.data());
        float dot = 0.0f;
        for (int i = 0; i < dim; ++i)
          dot += q[std::size_t(i)] * k[std::size_t(i)];
        const float score = dot * params.scale;
        // Online softmax: rescale what was summed whenever the maximum grows.
        if (score > running_max) {
          const float correction = std::exp(running_max - score);
          total *= correction;
          for (float& a : accumulator)
            a *= correction;
          running_max = score;
        }
        const float weight = std::exp(score - running_max);
        total += weight;
        load_head(values, page, slot, kv_head, v.data());
        for (int i = 0; i < dim; ++i)
          accumulator[std::size_t(i)] += weight * v[std::size_t(i)];
      }

      if (rotated_values) rotate_groups(accumulator.data(), dim);
      float* target = out + (t * params.heads + head) * dim;
      const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
      for (int i = 0; i < dim; ++i)
        target[i] = accumulator[std::size_t(i)] * inverse;
    }
  });
}

}  // namespace quire::kernels
