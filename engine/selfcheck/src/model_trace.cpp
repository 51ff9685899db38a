#include "model_trace.h"

#include <algorithm>

#include "quire/engine/runtime/model_runtime.h"

namespace quire::engine::selfcheck {
namespace {

RuntimeOptions check_options(const kernels::Backend& backend, int device, int tokens,
                             const TraceCache& cache) {
  RuntimeOptions options;
  options.cache_format = cache.format;
  options.residual_window = cache.residual_window;
  options.page_size = kCheckPageSize;
  options.max_chunk_tokens = kCheckPageSize;
  options.max_sequences = 1;
  options.cache_tokens = (tokens / kCheckPageSize + 1) * kCheckPageSize;
  // The model takes a few MiB; a GPU's usual reserve is for real models.
  options.reserve_bytes = 0;
  if (device >= 0) {
    // Every module on `device`: the other devices get no room at all.
    options.placement.mode = PlacementMode::Manual;
    options.placement.manual_limit_bytes.assign(backend.devices().size(), 0);
    options.placement.manual_limit_bytes[static_cast<std::size_t>(device)] = kGiB;
  }
  return options;
}

}  // namespace

cache::TokenId best_token(std::span<const float> row) {
  return static_cast<cache::TokenId>(std::max_element(row.begin(), row.end()) - row.begin());
}

ModelTrace run_trace(const std::shared_ptr<const ModelDescription>& model,
                     kernels::Backend& backend, int device, std::span<const cache::TokenId> prompt,
                     int generated, const TraceCache& cache,
                     std::optional<std::span<const cache::TokenId>> fed) {
  const int prompt_length = static_cast<int>(prompt.size());
  const int total = prompt_length + generated;
  ModelRuntime runtime(model, backend, check_options(backend, device, total, cache));
  // One sequence on pages 0, 1, ... of a runtime of its own: the cache's
  // bookkeeping has nothing to decide here, and its pages are not used.
  std::vector<cache::PageIndex> pages;
  for (int page = 0; page * kCheckPageSize < total; ++page)
    pages.push_back(static_cast<cache::PageIndex>(page));
  // A mixed model's sliding layers use the window pool's pages as a ring:
  // the pool holds what one sequence reads and writes in a step
  // (cache::CacheConfig::pages_held_at_most), so no live page is reused.
  std::vector<cache::PageIndex> window_pages = pages;
  if (const cache::PageCache* pool = runtime.cache().window_pool()) {
    for (std::size_t page = 0; page < window_pages.size(); ++page)
      window_pages[page] = static_cast<cache::PageIndex>(page % std::size_t(pool->num_pages()));
  }

  ModelTrace trace;
  for (const cache::TokenRange& chunk :
       page_aligned_chunks(cache::TokenRange{0, static_cast<std::int32_t>(prompt_length)},
                           kCheckPageSize, kCheckPageSize)) {
    ForwardPass::Sequence step{pages,
                               prompt.subspan(static_cast<std::size_t>(chunk.begin),
                                              static_cast<std::size_t>(chunk.end - chunk.begin)),
                               chunk.begin, true};
    step.window_pages = window_pages;
    const ForwardPass::Result result = runtime.forward().run(std::span(&step, 1));
    for (int row = 0; row < result.rows[0]; ++row) {
      const std::span<const float> values = result.row(0, row);
      trace.prompt_rows.emplace_back(values.begin(), values.end());
    }
  }
  trace.decision_rows.push_back(trace.prompt_rows.back());
  trace.best.push_back(best_token(trace.decision_rows.back()));
  for (int i = 1; i < generated; ++i) {
    const cache::TokenId token = fed ? (*fed)[static_cast<std::size_t>(i - 1)] : trace.best.back();
    ForwardPass::Sequence step{pages, std::span(&token, 1), prompt_length + i - 1, false};
    step.window_pages = window_pages;
    const ForwardPass::Result result = runtime.forward().run(std::span(&step, 1));
    const std::span<const float> values = result.row(0);
    trace.decision_rows.emplace_back(values.begin(), values.end());
    trace.best.push_back(best_token(values));
  }
  return trace;
}

}  // namespace quire::engine::selfcheck
