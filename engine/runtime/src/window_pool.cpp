#include "quire/engine/runtime/window_pool.h"

#include <limits>

namespace quire::engine {

int window_pool_layer_window(const ModelConfig& config) {
  int window = 0;
  bool global = false;
  for (std::size_t layer = 0; layer < config.sliding_windows.size(); ++layer) {
    // A window that hides no key makes its layer global.
    const int layer_window = config.binding_window(layer);
    if (layer_window == 0) {
      global = true;
    } else if (window == 0) {
      window = layer_window;
    } else if (layer_window != window) {
      return 0;  // sliding layers of several windows: one pool, as before
    }
  }
  return global ? window : 0;
}

bool layer_in_window_pool(const ModelConfig& config, std::size_t layer) {
  return window_pool_layer_window(config) > 0 && config.binding_window(layer) > 0;
}

std::int64_t window_pool_page_cap(const ModelConfig& config, int page_size, int step_tokens,
                                  int sequences) {
  cache::CacheConfig pool;
  pool.page_size = page_size;
  pool.window = window_pool_layer_window(config);
  pool.max_step_tokens = step_tokens;
  if (pool.window == 0) return 0;
  return std::int64_t{sequences} *
         pool.pages_held_at_most(std::numeric_limits<std::int32_t>::max());
}

}  // namespace quire::engine
