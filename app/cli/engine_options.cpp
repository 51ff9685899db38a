#include "engine_options.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <optional>

#include "cli_support.h"
#include "cuda_self_check.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cuda_loader.h"

namespace quire::cli {

void EngineOptions::add_to(CLI::App& command, bool with_context) {
  command
      .add_option("--devices", devices,
                  "Devices: cpu, or logical CPU devices with budgets such as cpu:2x512MiB; cuda "
                  "(every GPU), cuda:0,2 (chosen GPUs) or cuda:0:2x20GiB (GPU 0 as two devices "
                  "of 20 GiB); auto (CUDA when it can run and agrees with the CPU in its "
                  "self-check, else the CPU, said on stderr)")
      ->capture_default_str();
  command
      .add_option("--cache", cache,
                  "KV cache format: fp16, q8, q6, q4 or fp8, or keys and values coded apart "
                  "as k<keys>v<values> with each of 16, f8, 8 or 4 (k8v4 is q6; kf8v4: FP8 "
                  "keys, Q4 values)")
      ->capture_default_str();
  if (with_context) {
    command.add_option("--context", context, "Tokens of KV cache to plan for")
        ->check(CLI::NonNegativeNumber);
  }
  command
      .add_option("--split", split,
                  "Placement: fill (devices in order), balanced, or manual:GB,GB,...")
      ->capture_default_str();
  command.add_option("--reserve", reserve,
                     "MiB kept free: 512 on every device, or 512,1024 per selected device in "
                     "order (default: what the backend recommends for each device)");
  command
      .add_option("--threads", threads,
                  "CPU threads for the products and attention, the calling thread included "
                  "(default: one per hardware thread)")
      ->check(CLI::Range(1, 1024));
  command.add_option("--chunk", chunk, "Tokens per prefill step")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  command
      .add_option("--reserve-pages", reserve_pages,
                  "all: a reply's every page is reserved when it starts (it never runs out); "
                  "on-demand: pages are taken as it grows, so more chats fit at once and the "
                  "youngest waits when the cache is full")
      ->capture_default_str();
  command
      .add_option("--host-cache", host_cache,
                  "Tokens of host memory that keep evicted cache pages, so a returning chat "
                  "is restored instead of computed again (0: none)")
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--cache-residence", cache_residence,
                  "Where the KV cache's pages live: device; offloaded (host memory, each step "
                  "copying the pages it needs, so a cache larger than the devices fits, at a "
                  "cost in speed); offload-global (only layers without a sliding window)")
      ->capture_default_str();
  command
      .add_option("--cache-device", cache_device,
                  "Keep the whole KV cache on one device, its position among --devices (0 is "
                  "the first), while the layers spread over all of them; layers elsewhere "
                  "send their attention there (default: each layer's cache on its device)")
      ->check(CLI::NonNegativeNumber);
  command.add_flag("--fit", fit,
                   "When the model and cache do not fit, use the nearest setting that does (a "
                   "smaller cache format, else a smaller cache) and say what changed");
  command.add_flag("--no-step-graphs", no_step_graphs,
                   "Launch every decode step's kernels one by one instead of replaying CUDA "
                   "graphs (also QUIRE_STEP_GRAPHS=0)");
  command
      .add_option("--residual-window", residual_window,
                  "Running chats (at most) whose newest tokens, their open cache page, are kept "
                  "in FP16 beside the coded cache, so that the most attended tokens are exact "
                  "(one FP16 page per layer each; default 4; 0: off; an FP16 cache has none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command.add_flag("--dynamic-fp8-scales", dynamic_fp8_scales,
                   "FP8 cache halves compute a scale per page even where the model has "
                   "calibrated K/V scales (kv_cache_scheme), for comparing the two");
}

namespace {

std::string device_names(const kernels::Backend& backend) {
  const std::vector<kernels::DeviceInfo> devices = backend.devices();
  std::string text =
      std::to_string(devices.size()) + (devices.size() == 1 ? " device" : " devices");
  for (std::size_t i = 0; i < devices.size(); ++i)
    text += (i == 0 ? ": " : ", ") + devices[i].name;
  return text;
}

std::unique_ptr<kernels::Backend> cpu_backend(const std::string& devices, int threads) {
  try {
    return std::make_unique<kernels::CpuBackend>(kernels::CpuBackend::parse_devices(devices),
                                                 threads);
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("--devices: ") + error.what());
  }
}

kernels::LoadedBackend load_cuda(const std::string& devices) {
  try {
    return kernels::load_cuda_backend(devices);
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("--devices: ") + error.what());
  }
}

engine::DeviceReserves parse_reserves(const std::string& text) {
  if (text.empty()) return {};
  std::vector<std::int64_t> bytes;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string item(rest.substr(0, comma));
    double mebibytes = 0;
    try {
      std::size_t used = 0;
      mebibytes = std::stod(item, &used);
      if (used != item.size() || !(mebibytes >= 0) || mebibytes > 1e9) {
        throw std::invalid_argument(item);
      }
    } catch (const std::exception&) {
      throw UsageError("--reserve: \"" + item +
                       "\" is not a number of MiB; write 512, or 512,1024 for each device");
    }
    bytes.push_back(static_cast<std::int64_t>(std::llround(mebibytes * 1024.0 * 1024.0)));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return engine::DeviceReserves(std::move(bytes));
}

}  // namespace

std::unique_ptr<kernels::Backend> EngineOptions::make_backend() const {
  std::unique_ptr<kernels::Backend> backend = open_backend();
  const engine::DeviceReserves reserves = parse_reserves(reserve);
  const std::size_t count = backend->devices().size();
  if (reserves.per_device() && reserves.bytes.size() != count) {
    throw UsageError("--reserve gives " + std::to_string(reserves.bytes.size()) +
                     " values but --devices " + devices + " selects " + std::to_string(count) +
                     (count == 1 ? " device" : " devices") +
                     "; give one value for every device or one per device");
  }
  if (cache_device >= static_cast<int>(count)) {
    throw UsageError("--cache-device " + std::to_string(cache_device) + ": --devices " + devices +
                     " selects " + std::to_string(count) + (count == 1 ? " device" : " devices") +
                     "; give a position from 0 to " + std::to_string(count - 1));
  }
  return backend;
}

std::unique_ptr<kernels::Backend> EngineOptions::open_backend() const {
  if (devices == "auto") {
    // One line either way, on stderr, so that standard output stays the
    // command's own; a run on the CPU says why CUDA was passed over.
    kernels::LoadedBackend cuda = kernels::load_cuda_backend();
    if (cuda.backend) {
      // A backend whose results disagree with the CPU's must not answer
      // silently: the CPU runs instead, and the line says why.
      if (const std::optional<std::string> problem = cuda_self_check_problem(cuda)) {
        std::cerr << "quire-cli: running on the CPU backend; " << *problem << '\n';
        return cpu_backend("cpu", threads);
      }
      std::cerr << "quire-cli: running on the CUDA backend (" << device_names(*cuda.backend)
                << ")\n";
      return std::move(cuda.backend);
    }
    std::cerr << "quire-cli: running on the CPU backend; the CUDA backend cannot run: "
              << cuda.why_not << '\n';
    return cpu_backend("cpu", threads);
  }
  if (devices == "cuda" || devices.starts_with("cuda:")) {
    kernels::LoadedBackend cuda = load_cuda(devices);
    if (!cuda.backend) {
      throw UsageError("--devices " + devices + ": the CUDA backend cannot run: " + cuda.why_not +
                       "; use --devices cpu to run on the CPU");
    }
    if (const std::optional<std::string> problem = cuda_self_check_problem(cuda)) {
      throw UsageError("--devices " + devices + ": " + *problem +
                       "; use --devices cpu to run on the CPU, or " + self_check_override_hint());
    }
    return std::move(cuda.backend);
  }
  if (devices == "cpu" || devices.starts_with("cpu:")) return cpu_backend(devices, threads);
  throw UsageError("--devices \"" + devices +
                   "\" is not understood; write cpu, cpu:2x512MiB, cuda, cuda:0,2, "
                   "cuda:0:2x20GiB or auto");
}

engine::RuntimeOptions EngineOptions::runtime_options() const {
  engine::RuntimeOptions options;
  const std::optional<cache::CacheFormat> format = cache::parse_cache_format(this->cache);
  if (!format) {
    throw UsageError("--cache \"" + this->cache +
                     "\" is not fp16, q8, q6, q4, fp8 or a pair such as k8v4 (keys and values "
                     "each 16, f8, 8 or 4)");
  }
  options.cache_format = *format;
  options.cache_tokens = context;
  options.max_chunk_tokens = chunk;
  options.step_graphs = !no_step_graphs;
  options.calibrated_kv_scales = !dynamic_fp8_scales;
  options.residual_window = residual_window;
  if (reserve_pages == "all") {
    options.reservation = cache::ReservationPolicy::ReserveOnAdmission;
  } else if (reserve_pages == "on-demand") {
    options.reservation = cache::ReservationPolicy::OnDemand;
  } else {
    throw UsageError("--reserve-pages \"" + reserve_pages + "\" is not all or on-demand");
  }
  options.host_pages = static_cast<int>((host_cache + options.page_size - 1) / options.page_size);
  options.reserve_bytes = parse_reserves(reserve);
  if (cache_device >= 0) options.cache_device = cache_device;
  if (cache_residence == "device") {
    options.cache_residence = engine::CacheResidence::Device;
  } else if (cache_residence == "offloaded") {
    options.cache_residence = engine::CacheResidence::Offloaded;
  } else if (cache_residence == "offload-global") {
    options.cache_residence = engine::CacheResidence::OffloadGlobalLayers;
  } else {
    throw UsageError("--cache-residence \"" + cache_residence +
                     "\" is not device, offloaded or offload-global");
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
