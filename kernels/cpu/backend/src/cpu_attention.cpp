// Causal attention over paged K/V in every cache format: the call is cut into
// work items (attention_plan.h), which the thread pool runs through the
// per-item kernel (attention_kernel.h); parts of split key ranges are merged
// at the end.

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attention_kernel.h"
#include "attention_plan.h"
#include "kv_access.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/linear.h"
#include "quire/kernels/cpu/simd.h"

namespace quire::kernels {

void CpuBackend::paged_attention(int device, const KvLayerView& layer, const TokenBatch& batch,
                                 const float* query, const AttentionParams& params, float* out) {
  check_device(device);
  const KvLayerLayout& layout = layer.layout;
  check_kv_layout(layout);
  if (params.heads <= 0 || params.heads % layout.kv_heads != 0) {
    throw std::invalid_argument("query heads must be a multiple of the K/V heads");
  }
  if (!(params.softcap >= 0.0f && std::isfinite(params.softcap))) {
    throw std::invalid_argument("attention soft-capping must be 0 (none) or a positive cap, not " +
                                std::to_string(params.softcap));
  }
  for (std::int64_t t = 0; t < batch.tokens; ++t) {
    const std::int32_t position = batch.positions[t];
    if (position / layout.page_size >= batch.max_pages) {
      throw std::out_of_range("position " + std::to_string(position) +
                              " lies outside the sequence's page table");
    }
    const std::int32_t last = last_visible_position(batch, t);
    const std::int32_t from = batch.visible_from != nullptr ? batch.visible_from[t] : position;
    if (last < position || last / layout.page_size >= batch.max_pages || from < 0 ||
        from > position) {
      throw std::out_of_range("position " + std::to_string(position) + " attends to the block " +
                              std::to_string(from) + ".." + std::to_string(last) +
                              ", which does not hold it or lies outside the sequence's page table");
    }
  }
  cpu_kv::check_mirrored(batch, layer.mirrors.slot_count);
  const int dim = layout.head_dim;
  const int group = params.heads / layout.kv_heads;
  const cpu_attention::AttentionPlan plan = cpu_attention::plan_attention(
      batch, layout.kv_heads, group, params.sliding_window, pool_.size());

  std::vector<float> partial_values(static_cast<std::size_t>(plan.partial_rows * dim));
  std::vector<float> partial_max(static_cast<std::size_t>(plan.partial_rows));
  std::vector<float> partial_sum(static_cast<std::size_t>(plan.partial_rows));
  const cpu_attention::AttentionCall call{cpu_kv::key_plane(layer),
                                          cpu_kv::value_plane(layer),
                                          &batch,
                                          &plan,
                                          layout.page_size,
                                          layout.num_pages,
                                          params.heads,
                                          group,
                                          dim,
                                          params.scale,
                                          params.softcap,
                                          query,
                                          out,
                                          partial_values.data(),
                                          partial_max.data(),
                                          partial_sum.data(),
                                          wide_vectors_allowed()};

  const std::int64_t items = static_cast<std::int64_t>(plan.items.size());
  pool_.parallel_for(items, 1, [&](std::int64_t begin, std::int64_t end) {
    cpu_attention::AttentionScratch scratch;
    for (std::int64_t i = begin; i < end; ++i)
      cpu_attention::attend(call, plan.items[std::size_t(i)], scratch);
  });

  if (plan.partial_rows > 0) {
    // Every (block, K/V head) whose key range was split.
    std::vector<std::pair<int, int>> merges;
    for (int b = 0; b < static_cast<int>(plan.blocks.size()); ++b) {
      if (plan.blocks[std::size_t(b)].splits < 2) continue;
      for (int h = 0; h < layout.kv_heads; ++h)
        merges.emplace_back(b, h);
    }
    pool_.parallel_for(std::int64_t(merges.size()), 1, [&](std::int64_t begin, std::int64_t end) {
      std::vector<float> row(static_cast<std::size_t>(dim));
      for (std::int64_t i = begin; i < end; ++i) {
        const auto [b, h] = merges[std::size_t(i)];
        cpu_attention::merge_parts(call, plan.blocks[std::size_t(b)], h, row);
      }
    });
  }

  // A token before position 0 has no keys; its output is zero.
  for (const std::int64_t t : plan.idle)
    std::fill(out + t * params.heads * dim, out + (t + 1) * params.heads * dim, 0.0f);
}

std::vector<std::pair<std::string, std::string>> CpuBackend::kernel_paths() {
  std::vector<std::pair<std::string, std::string>> paths = linear_kernel_paths();
  paths.emplace_back("attention",
                     wide_vectors_allowed() ? "AVX-512 scores and sums" : vectorized_clone_name());
  paths.emplace_back("attention decode steps",
                     cpu_attention::fp16_decode_supported()
                         ? "AVX2+FMA+F16C, query heads in registers (FP16 pages read in place, "
                           "other codings decoded 64 positions at a time)"
                         : "the general attention kernel");
  return paths;
}

}  // namespace quire::kernels
