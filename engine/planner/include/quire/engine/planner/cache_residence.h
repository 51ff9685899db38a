#pragma once

#include <cstdint>

namespace quire::engine {

// Where the KV cache's pages live. Offloaded pages stay in host memory and
// each step streams the pages it needs through a small staging ring on the
// layer's device: a model whose cache does not fit its devices still runs,
// each decode step paying for the copies.
enum class CacheResidence : std::uint8_t {
  Device,     // every attention layer's pages on its device
  Offloaded,  // every attention layer's pages in host memory
  // Only layers without a sliding window go to host memory: a window's pages
  // are few, and copying them each step would cost more than they take. A
  // window that no sequence of the model reaches is none (Phi-4-mini's).
  OffloadGlobalLayers,
};

const char* to_string(CacheResidence residence);

}  // namespace quire::engine
