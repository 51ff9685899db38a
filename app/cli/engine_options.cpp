#include "engine_options.h"

#include <CLI/CLI.hpp>
#include <cmath>

#include "cli_support.h"
#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::cli {

void EngineOptions::add_to(CLI::App& command, bool with_context) {
  command
      .add_option("--devices", devices,
                  "Devices: cpu, or logical CPU devices with budgets such as cpu:2x512MiB")
      ->capture_default_str();
  command.add_option("--cache", cache, "KV cache format: fp16, q8, q6, q4 or fp8")
      ->capture_default_str();
  if (with_context) {
    command.add_option("--context", context, "Tokens of KV cache to plan for")
        ->check(CLI::NonNegativeNumber);
  }
  command
      .add_option("--split", split,
                  "Placement: fill (devices in order), balanced, or manual:GB,GB,...")
      ->capture_default_str();
  command.add_option("--reserve", reserve_mib, "MiB kept free on every device");
  command.add_option("--chunk", chunk, "Tokens per prefill step")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
}

std::unique_ptr<kernels::Backend> EngineOptions::make_backend() const {
  try {
    return std::make_unique<kernels::CpuBackend>(kernels::CpuBackend::parse_devices(devices));
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("--devices: ") + error.what());
  }
}

engine::RuntimeOptions EngineOptions::runtime_options() const {
  engine::RuntimeOptions options;
  const std::optional<cache::CacheFormat> format = cache::parse_cache_format(this->cache);
  if (!format) throw UsageError("--cache \"" + this->cache + "\" is not fp16, q8, q6, q4 or fp8");
  options.cache_format = *format;
  options.cache_tokens = context;
  options.max_chunk_tokens = chunk;
  if (reserve_mib >= 0) {
    options.reserve_bytes = static_cast<std::int64_t>(std::llround(reserve_mib * 1024.0 * 1024.0));
  }
  if (split == "fill") {
    options.placement.mode = engine::PlacementMode::FillInOrder;
  } else if (split == "balanced") {
    options.placement.mode = engine::PlacementMode::Balanced;
  } else if (split.starts_with("manual:")) {
    options.placement.mode = engine::PlacementMode::Manual;
    std::string_view rest = std::string_view(split).substr(7);
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string item(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      double gigabytes = 0;
      try {
        std::size_t used = 0;
        gigabytes = std::stod(item, &used);
        if (used != item.size() || gigabytes < 0) throw std::invalid_argument(item);
      } catch (const std::exception&) {
        throw UsageError("--split manual: \"" + item + "\" is not a number of GB");
      }
      options.placement.manual_limit_bytes.push_back(
          static_cast<std::int64_t>(std::llround(gigabytes * 1024.0 * 1024.0 * 1024.0)));
    }
  } else {
    throw UsageError("--split \"" + split + "\" is not fill, balanced or manual:GB,GB,...");
  }
  return options;
}

}  // namespace quire::cli
