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
  // MiB kept free: "512" on every device, "512,1024" per selected device in
  // order; empty: what the backend recommends per device.
  std::string reserve;
  int chunk = 256;
  int threads = 0;  // CPU threads; 0: one per hardware thread
  bool no_step_graphs = false;
  bool dynamic_fp8_scales = false;  // FP8 halves ignore a model's calibrated K/V scales
  int residual_window = engine::kDefaultResidualWindow;  // FP16 mirror slots; 0: off
  std::string reserve_pages = "on-demand";  // "all" or "on-demand" (the app's default too)
  std::int64_t host_cache = 0;              // tokens of the host-memory tier; 0: none
  std::string cache_residence = "device";   // "device", "offloaded" or "offload-global"
  bool fit = false;                         // a plan that does not fit takes the nearest that does

  // The position among --devices that holds every layer's KV cache; -1:
  // each layer's cache on its own device.
  int cache_device = -1;

  // --devices, --cache, --context, --split, --reserve, --threads, --chunk,
  // --no-step-graphs, --dynamic-fp8-scales, --reserve-pages, --host-cache, --cache-residence,
  // --fit,
  // --cache-device.
  void add_to(CLI::App& command, bool with_context);

  // Also checks that per-device reserves name as many devices as it has, and
  // that --cache-device names one of them.
  std::unique_ptr<kernels::Backend> make_backend() const;
  engine::RuntimeOptions runtime_options() const;
  // `options`, or with --fit the nearest options that fit (said on stderr).
  // Throws engine::ModelError when the plan does not fit and --fit is off,
  // naming what --fit would use (fit_option.cpp).
  engine::RuntimeOptions fitted(const engine::ModelDescription& model,
                                const kernels::Backend& backend,
                                engine::RuntimeOptions options) const;

 private:
  std::unique_ptr<kernels::Backend> open_backend() const;
};

}  // namespace quire::cli
