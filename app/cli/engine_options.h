#pragma once

#include <memory>
#include <string>

#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/backend.h"

namespace CLI {
class App;
}

namespace quire::cli {

// Options every command that plans or runs a model shares.
struct EngineOptions {
  std::string devices = "cpu";
  std::string cache = "fp16";
  std::int64_t context = 0;  // tokens of KV cache; 0: the command decides
  std::string split = "fill";
  double reserve_mib = -1;  // < 0: what the backend recommends per device
  int chunk = 256;
  bool no_step_graphs = false;
  std::string reserve_pages = "all";       // "all" or "on-demand"
  std::int64_t host_cache = 0;             // tokens of the host-memory tier; 0: none
  std::string cache_residence = "device";  // "device", "offloaded" or "offload-global"

  // --devices, --cache, --context, --split, --reserve, --chunk,
  // --no-step-graphs, --reserve-pages, --host-cache, --cache-residence.
  void add_to(CLI::App& command, bool with_context);

  std::unique_ptr<kernels::Backend> make_backend() const;
  engine::RuntimeOptions runtime_options() const;
};

}  // namespace quire::cli
