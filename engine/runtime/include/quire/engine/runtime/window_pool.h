#pragma once

#include <cstddef>
#include <cstdint>

#include "quire/cache/cache_config.h"
#include "quire/engine/model/model_config.h"

namespace quire::engine {

// Mixed models (Gemma 2, Gemma 3): the layers that slide take their cache
// pages from a window pool of their own (cache::CacheConfig::layer_window),
// the others keep every page. These say which layers, and how large the
// pool is, for the runtime and the planner alike.

// The window the sliding layers share where some layers slide and others
// attend to everything, else 0 (every layer in the one pool: a model whose
// layers all slide bounds that pool by its window instead).
int window_pool_layer_window(const ModelConfig& config);
// Whether layer `layer` takes its pages from the window pool.
bool layer_in_window_pool(const ModelConfig& config, std::size_t layer);
// The most window-pool pages the pool is given: `sequences` sequences each
// holding as many as the pool's window lets one hold at once
// (cache::CacheConfig::pages_held_at_most of the pool), for pages of
// `page_size` tokens and steps of `step_tokens`. A cache of fewer main pages
// gets that many. 0 without a window pool.
std::int64_t window_pool_page_cap(const ModelConfig& config, int page_size, int step_tokens,
                                  int sequences);

}  // namespace quire::engine
