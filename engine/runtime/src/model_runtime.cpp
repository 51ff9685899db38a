#include "quire/engine/runtime/model_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "quire/engine/model_error.h"
#include "quire/engine/runtime/host_copy_speed.h"
#include "quire/engine/runtime/window_pool.h"

namespace quire::engine {
namespace {

bool step_graphs_allowed(const RuntimeOptions& options) {
  const char* setting = std::getenv("QUIRE_STEP_GRAPHS");
  return options.step_graphs && (setting == nullptr || std::string_view(setting) != "0");
}

std::int64_t cache_tokens(const ModelDescription& model, const RuntimeOptions& options) {
  return options.cache_tokens > 0 ? options.cache_tokens : model.config.max_position_embeddings;
}

// The options with the host's copy speed measured, where the cache is
// offloaded and the caller did not give it: before any weight is loaded, so
// the device has room for the test.
RuntimeOptions measured(RuntimeOptions options, kernels::Backend& backend) {
  if (options.cache_residence == CacheResidence::Device || options.host_copy_bytes_per_second > 0)
    return options;
  const std::vector<kernels::DeviceInfo> devices = backend.devices();
  if (!devices.empty()) {
    options.host_copy_bytes_per_second = measure_host_copy_speed(backend, devices.front().index);
  }
  return options;
}

LoadedModel load_placed(const ModelDescription& model, kernels::Backend& backend,
                        const PlacementPlan& plan, const LoadOptions& load) {
  if (!plan.fits) throw ModelError(plan.problem);
  std::vector<int> devices;
  for (const ModulePlacement& module : plan.modules)
    devices.push_back(module.device);
  return LoadedModel::load(model, backend, devices, load);
}

}  // namespace

bool cache_layer_offloaded(const ModelDescription& model, std::size_t layer,
                           CacheResidence residence) {
  switch (residence) {
    case CacheResidence::Device:
      return false;
    case CacheResidence::Offloaded:
      // A window pool's pages are few and read every step: they stay.
      return !layer_in_window_pool(model.config, layer);
    case CacheResidence::OffloadGlobalLayers:
      return model.config.binding_window(layer) == 0;
  }
  return false;
}

namespace {

// The model, or a refusal before anything is planned or loaded when the
// backend cannot run its weights.
std::shared_ptr<const ModelDescription> runnable_on(std::shared_ptr<const ModelDescription> model,
                                                    const kernels::Backend& backend) {
  bool fp8 = false;
  bool exl3 = false;
  const auto note = [&](const LinearDescription& linear) {
    fp8 = fp8 || linear.format == LinearFormat::Fp8;
    exl3 = exl3 || linear.format == LinearFormat::Exl3;
  };
  note(model->head);
  for (const LayerDescription& layer : model->layers)
    layer.for_each_linear(note);
  const char* refused = fp8 && !backend.runs_fp8_weights()
                            ? "FP8 weights (compressed-tensors float-quantized)"
                        : exl3 && !backend.runs_exl3_weights() ? "EXL3 weights"
                                                               : nullptr;
  if (refused == nullptr) return model;
  throw ModelError(model->directory.string() + ": its " + refused + " are not run by the " +
                   backend.name() +
                   " backend; choose the CPU backend (--devices cpu, or Settings → Backend) for "
                   "this model");
}

}  // namespace

int residual_window_slots(const RuntimeOptions& options) {
  if (options.cache_format == cache::CacheFormat::FP16) return 0;
  // No step holds more sequences than the runtime has room for, so more
  // slots would be memory no sequence ever uses.
  return std::clamp(options.residual_window, 0, std::max(options.max_sequences, 0));
}

CacheResidence effective_residence(CacheResidence asked,
                                   std::span<const kernels::DeviceInfo> devices) {
  const bool host_only =
      !devices.empty() && std::all_of(devices.begin(), devices.end(),
                                      [](const kernels::DeviceInfo& d) { return d.host_memory; });
  return host_only ? CacheResidence::Device : asked;
}

PlacementRequest placement_request(const ModelDescription& model,
                                   std::span<const kernels::DeviceInfo> devices,
                                   const RuntimeOptions& options) {
  PlacementRequest request;
  request.modules =
      model.modules(options.cache_format, options.page_size, options.max_chunk_tokens);
  request.device_scratch_bytes = model.scratch_bytes(options.max_chunk_tokens);
  request.context_tokens = cache_tokens(model, options);
  request.model_context_tokens = model.config.max_position_embeddings;
  if (const int window = model.config.uniform_sliding_window(); window > 0) {
    cache::CacheConfig bound;
    bound.page_size = options.page_size;
    bound.window = window;
    bound.max_step_tokens = options.max_chunk_tokens;
    request.window_pages = bound.pages_held_at_most(std::numeric_limits<std::int32_t>::max());
  }
  request.window_pool_pages = window_pool_page_cap(model.config, options.page_size,
                                                   options.max_chunk_tokens, options.max_sequences);
  request.page_size = options.page_size;
  for (const kernels::DeviceInfo& device : devices) {
    request.devices.push_back(PlanDevice{device.index, device.name, device.total_bytes,
                                         device.free_bytes, device.host_memory});
  }
  // The residual window's FP16 mirrors, on the devices of the main pool's
  // device layers.
  const cache::LayerShape shape = model.kv_shape();
  const std::int64_t mirror_bytes =
      2 * std::int64_t{residual_window_slots(options)} *
      kernels::kv_mirror_page_bytes(options.page_size, shape.kv_heads, shape.head_dim);
  std::size_t layer = 0;
  for (ModuleCost& module : request.modules) {
    if (module.kind != ModuleKind::Layer) continue;
    module.cache_in_host_memory = cache_layer_offloaded(model, layer, options.cache_residence);
    module.in_window_pool = layer_in_window_pool(model.config, layer);
    if (!module.cache_in_host_memory && !module.in_window_pool)
      module.cache_fixed_bytes = mirror_bytes;
    module.sliding_window = model.config.binding_window(layer);
    ++layer;
  }
  request.cache_residence = options.cache_residence;
  request.staging_slots = options.staging_slots;
  request.cache_device = options.cache_device;
  if (options.cache_residence != CacheResidence::Device) {
    request.host = PlanHost{host_available_bytes(), options.host_reserve_bytes};
    request.host_copy_bytes_per_second = options.host_copy_bytes_per_second;
  }
  if (model.vision.tower) {
    // The tower runs on the CPU: its weights and an image's activations are
    // in host memory, priced after the language model.
    const vision::VisionTowerSummary& tower = *model.vision.tower;
    request.vision_tower =
        VisionTowerCost{tower.tower + " tower, " + tower.projector + " projector",
                        tower.memory_bytes, tower.scratch_bytes};
    if (!request.host) request.host = PlanHost{host_available_bytes(), options.host_reserve_bytes};
  }
  request.policy = options.placement;
  apply_reserves(options.reserve_bytes, devices, request.policy);
  return request;
}

ModelRuntime::ModelRuntime(std::shared_ptr<const ModelDescription> model, kernels::Backend& backend,
                           const RuntimeOptions& options, const LoadOptions& load)
    : model_(runnable_on(std::move(model), backend)),
      backend_(backend),
      options_(options),
      plan_(plan_placement(
          placement_request(*model_, backend.devices(), measured(options, backend)))),
      loaded_(load_placed(*model_, backend, plan_, load)) {
  if (auto reason =
          cache::format_info(options.cache_format).unsupported_reason(model_->kv_shape())) {
    throw ModelError(*reason);
  }
  cache::CacheConfig config;
  config.page_size = options.page_size;
  config.num_pages = static_cast<int>(plan_.pages);
  config.reservation = options.reservation;
  config.host_pages = options.host_pages;
  config.format = options.cache_format;
  // When every layer slides, a sequence's pages behind its window go back to
  // the cache; a mixed model's sliding layers do the same in a window pool of
  // their own, and its global layers keep every page.
  config.window = model_->config.uniform_sliding_window();
  config.max_step_tokens = options.max_chunk_tokens;
  config.layer_window = window_pool_layer_window(model_->config);
  std::vector<bool> windowed(model_->layers.size(), false);
  for (std::size_t layer = 0; layer < windowed.size(); ++layer) {
    windowed[layer] = layer_in_window_pool(model_->config, layer);
    config.layers.push_back(cache::CacheLayer{model_->kv_shape(), -1, windowed[layer]});
  }
  if (config.layer_window > 0) {
    config.window_pages =
        static_cast<int>(std::min<std::int64_t>(config.num_pages, plan_.window_pool_pages));
  }
  cache_ = std::make_unique<cache::PageCache>(config);

  KvStorage::Config storage;
  storage.format = options.cache_format;
  storage.page_size = options.page_size;
  storage.num_pages = config.num_pages;
  storage.host_pages = options.host_pages;
  storage.staging_slots = options.staging_slots;
  storage.mirror_slots = residual_window_slots(options);
  if (config.layer_window > 0) {
    storage.windowed_layers = windowed;
    storage.window_pages = config.window_pages;
  }
  storage_ = std::make_unique<KvStorage>(
      backend, storage, std::vector<cache::LayerShape>(model_->layers.size(), model_->kv_shape()));
  if (options.calibrated_kv_scales && model_->kv_scales) {
    storage_->use_calibrated_scales(model_->kv_scales->layers);
  }
  // The device that holds every layer's pages, or -1: each layer's own.
  const int cache_device =
      plan_.cache_slot >= 0 ? plan_.devices[static_cast<std::size_t>(plan_.cache_slot)].index : -1;
  for (std::size_t i = 0; i < loaded_.layers.size(); ++i) {
    const bool offloaded = cache_layer_offloaded(*model_, i, options.cache_residence);
    const int device = cache_device >= 0 ? cache_device : loaded_.layers[i].device;
    storage_->place_layer(i, device, offloaded ? PageHome::Host : PageHome::Device);
    // The cache's statistics count device memory; host pages are not in them.
    if (!offloaded) cache_->place_layer(i, device);
  }
  forward_ = std::make_unique<ForwardPass>(
      *model_, loaded_, *storage_, backend,
      ForwardPass::Limits{options.max_chunk_tokens, options.max_sequences,
                          options.max_chunk_tokens});
  forward_->graphs().set_enabled(step_graphs_allowed(options));
}

ModelRuntime::~ModelRuntime() {
  if (disk_) cache_->attach_disk(nullptr);
}

DiskTier& ModelRuntime::open_disk_tier(DiskTierOptions options) {
  close_disk_tier();
  // Calibrated FP8 scales code pages differently from per-page scales.
  if (storage_->calibrated_keys() || storage_->calibrated_values()) {
    options.identity_extra += options.identity_extra.empty() ? "" : ";";
    options.identity_extra += "calibrated-kv-scales";
  }
  auto tier = std::make_unique<DiskTier>(model_->directory, *storage_, cache_->config(),
                                         std::move(options));
  cache_->attach_disk(tier.get());
  disk_ = std::move(tier);
  return *disk_;
}

void ModelRuntime::close_disk_tier() {
  if (!disk_) return;
  cache_->attach_disk(nullptr);
  disk_.reset();
}

ArchiveResult ModelRuntime::archive_cache() {
  if (!disk_) return {};
  return disk_->archive(*cache_);
}

bool ModelRuntime::execute(const cache::CacheInstructions& instructions) {
  if (instructions.disk_saves.empty() && instructions.disk_restores.empty()) {
    storage_->execute(instructions);
    return true;
  }
  if (!disk_) throw std::logic_error("disk instructions without a disk tier");
  // Victims go to disk before anything is restored or copied into them.
  storage_->save_to_host(instructions.saves);
  disk_->save(instructions.disk_saves);
  cache::CacheInstructions rest;
  rest.restores = instructions.restores;
  rest.copies = instructions.copies;
  rest.window_copies = instructions.window_copies;
  storage_->execute(rest);
  return disk_->restore(instructions.disk_restores).empty();
}

void ModelRuntime::save_evicted(std::span<const cache::HostSave> saves,
                                std::span<const cache::DiskSave> disk_saves) {
  storage_->save_to_host(saves);
  if (!disk_saves.empty()) {
    if (!disk_) throw std::logic_error("disk saves without a disk tier");
    disk_->save(disk_saves);
  }
}

void ModelRuntime::offload_cache() {
  std::vector<std::size_t> moving;
  for (std::size_t i = 0; i < storage_->layers(); ++i) {
    // The window pool's pages stay (KvStorage::windowed).
    if (storage_->placed(i) && storage_->home(i) == PageHome::Device && !storage_->windowed(i))
      moving.push_back(i);
  }
  // The staging rings first, while the pages are still on their devices: a
  // device too short for its ring then keeps its cache whole. Failing that,
  // the rings are made in the room the pages leave.
  bool reserved = true;
  try {
    for (const std::size_t layer : moving)
      storage_->reserve_staging_for(layer);
  } catch (const kernels::DeviceOutOfMemory&) {
    reserved = false;
  }
  for (const std::size_t layer : moving) {
    storage_->move_to_host(layer);
    cache_->place_layer(layer, -1);
  }
  options_.cache_residence = CacheResidence::Offloaded;
  if (!reserved) storage_->reserve_staging();
}

std::vector<cache::TokenRange> page_aligned_chunks(cache::TokenRange range, int max_tokens,
                                                   int page_size) {
  std::vector<cache::TokenRange> chunks;
  std::int32_t begin = range.begin;
  while (begin < range.end) {
    std::int32_t end = std::min(range.end, begin + max_tokens);
    // Prefer to stop at a page boundary, unless that leaves no progress.
    const std::int32_t boundary = end / page_size * page_size;
    if (end < range.end && boundary > begin) end = boundary;
    chunks.push_back(cache::TokenRange{begin, end});
    begin = end;
  }
  return chunks;
}

std::vector<std::vector<float>> ModelRuntime::prefill(
    std::span<const cache::TokenId> tokens, bool all,
    std::span<const std::int32_t> rope_positions) {
  if (!rope_positions.empty() && rope_positions.size() != 3 * tokens.size()) {
    throw std::invalid_argument("a prompt of " + std::to_string(tokens.size()) + " tokens takes " +
                                std::to_string(3 * tokens.size()) + " M-RoPE positions, not " +
                                std::to_string(rope_positions.size()));
  }
  cache::AdmissionPlan refused;
  cache::AdmissionRequest request{std::vector<cache::TokenId>(tokens.begin(), tokens.end()), 0};
  request.every_page = all;  // every position is computed again
  std::optional<cache::Admission> admission;
  // A page that cannot be read from disk is computed instead: plan again.
  for (;;) {
    admission = cache_->admit(request, &refused);
    if (!admission) throw ModelError("the prompt does not fit the cache: " + refused.reason());
    bool restored = false;
    try {
      restored = execute(admission->instructions);
    } catch (...) {
      cache_->abandon(admission->sequence, admission->instructions);
      throw;
    }
    if (restored) break;
    cache_->abandon(admission->sequence, admission->instructions);
  }
  const cache::SequenceId sequence = admission->sequence;
  std::vector<std::vector<float>> logits;
  try {
    std::vector<cache::TokenRange> ranges = admission->compute;
    if (all) ranges = {cache::TokenRange{0, static_cast<std::int32_t>(tokens.size())}};
    for (const cache::TokenRange& range : ranges) {
      for (const cache::TokenRange& chunk :
           page_aligned_chunks(range, options_.max_chunk_tokens, options_.page_size)) {
        const cache::AppendResult taken = cache_->ensure_pages(sequence, chunk.end);
        save_evicted(taken.saves, taken.disk_saves);
        if (taken.status != cache::AppendStatus::Appended) {
          throw ModelError("the prompt does not fit the cache: no page is left for its tokens " +
                           std::to_string(chunk.begin) + ".." + std::to_string(chunk.end));
        }
        const std::span<const cache::PageIndex> pages = cache_->page_table(sequence);
        ForwardPass::Sequence step{
            pages,
            tokens.subspan(static_cast<std::size_t>(chunk.begin),
                           static_cast<std::size_t>(chunk.end - chunk.begin)),
            chunk.begin, all};
        step.window_pages = cache_->window_page_table(sequence);
        if (!rope_positions.empty()) {
          step.rope_positions = rope_positions.subspan(3 * static_cast<std::size_t>(chunk.begin),
                                                       3 * step.tokens.size());
        }
        const ForwardPass::Result result = forward_->run(std::span(&step, 1));
        cache_->mark_computed(sequence, chunk.end);
        if (all) {
          for (int row = 0; row < result.rows[0]; ++row) {
            const std::span<const float> values = result.row(0, row);
            logits.emplace_back(values.begin(), values.end());
          }
        } else if (chunk.end == static_cast<std::int32_t>(tokens.size())) {
          const std::span<const float> values = result.row(0);
          logits.emplace_back(values.begin(), values.end());
        }
      }
    }
  } catch (...) {
    cache_->release(sequence);
    throw;
  }
  cache_->release(sequence);
  return logits;
}

}  // namespace quire::engine
