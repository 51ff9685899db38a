#include "quire/engine/runtime/kv_storage.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "host_kv_pages.h"
#include "kv_streamer.h"

namespace quire::engine {

namespace {

kernels::KvCoding kernel_coding(cache::ElementCoding coding) {
  switch (coding) {
    case cache::ElementCoding::FP16:
      return kernels::KvCoding::Fp16;
    case cache::ElementCoding::FP8:
      return kernels::KvCoding::Fp8;
    case cache::ElementCoding::Q8:
      return kernels::KvCoding::Int8;
    case cache::ElementCoding::Q4:
      return kernels::KvCoding::Int4;
  }
  throw std::invalid_argument("unknown cache coding");
}

}  // namespace

std::pair<kernels::KvCoding, kernels::KvCoding> kv_codings(cache::CacheFormat format) {
  return {kernel_coding(format.key), kernel_coding(format.value)};
}

KvStorage::KvStorage(kernels::Backend& backend, Config config,
                     std::vector<cache::LayerShape> layers)
    : backend_(backend),
      config_(config),
      shapes_(std::move(layers)),
      devices_(shapes_.size(), -1),
      homes_(shapes_.size(), PageHome::Device),
      planes_(shapes_.size()),
      views_(shapes_.size()),
      streamer_(std::make_unique<KvStreamer>(backend, config.page_size, config.staging_slots)),
      mirrors_(config.format == cache::CacheFormat::FP16 ? 0 : std::max(config.mirror_slots, 0)) {
  if (!config_.windowed_layers.empty() && config_.windowed_layers.size() != shapes_.size()) {
    throw std::invalid_argument("window pool membership for " +
                                std::to_string(config_.windowed_layers.size()) +
                                " layers, but the cache has " + std::to_string(shapes_.size()));
  }
  const auto [key, value] = kv_codings(config_.format);
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    views_[i].layout = kernels::make_kv_layout(
        key, value, config_.page_size, shapes_[i].kv_heads, shapes_[i].head_dim,
        windowed(i) ? config_.window_pages : config_.num_pages);
    // The host tier keeps the main pool's pages only.
    host_offsets_.push_back(host_slot_bytes_);
    if (!windowed(i)) host_slot_bytes_ += page_bytes(i);
  }
  if (config_.host_pages > 0) {
    // Left uninitialized, so the system provides its memory page by page as
    // evicted pages are saved: a tier sized from free RAM costs nothing until
    // a chat is evicted into it.
    host_ = std::make_unique_for_overwrite<std::uint8_t[]>(
        static_cast<std::size_t>(host_slot_bytes_ * config_.host_pages));
  }
}

std::int64_t KvStorage::page_bytes(std::size_t layer) const {
  const kernels::KvLayerLayout& layout = views_.at(layer).layout;
  return layout.key_data_page_bytes + layout.key_scale_page_bytes + layout.value_data_page_bytes +
         layout.value_scale_page_bytes;
}

KvStorage::~KvStorage() = default;

bool KvStorage::windowed(std::size_t layer) const {
  return !config_.windowed_layers.empty() && config_.windowed_layers.at(layer);
}

bool KvStorage::any_on_host() const {
  return std::find(homes_.begin(), homes_.end(), PageHome::Host) != homes_.end();
}

KvStorage::Planes KvStorage::allocate_planes(std::size_t layer, int device, PageHome home) {
  const kernels::KvLayerLayout& layout = views_.at(layer).layout;
  auto allocate = [&](std::int64_t page_bytes) {
    if (page_bytes == 0) return kernels::DeviceBuffer();
    const auto bytes = static_cast<std::size_t>(page_bytes * layout.num_pages);
    if (home == PageHome::Host) {
      kernels::DeviceBuffer buffer = backend_.allocate_host(bytes, "KV cache in host memory");
      std::memset(buffer.data(), 0, bytes);
      return buffer;
    }
    kernels::DeviceBuffer buffer = backend_.allocate(device, bytes, "KV cache");
    // FP8 pages read their scale as "nothing written yet" when it is zero.
    backend_.fill_zero(device, buffer.data(), bytes);
    return buffer;
  };
  Planes planes;
  planes.key_data = allocate(layout.key_data_page_bytes);
  planes.key_scales = allocate(layout.key_scale_page_bytes);
  planes.value_data = allocate(layout.value_data_page_bytes);
  planes.value_scales = allocate(layout.value_scale_page_bytes);
  if (home == PageHome::Device && !windowed(layer) && mirrors_.count() > 0) {
    const auto bytes = static_cast<std::size_t>(
        kernels::kv_mirror_page_bytes(layout.page_size, layout.kv_heads, layout.head_dim) *
        mirrors_.count());
    planes.key_mirror = backend_.allocate(device, bytes, "KV cache residual window");
    planes.value_mirror = backend_.allocate(device, bytes, "KV cache residual window");
  }
  return planes;
}

bool KvStorage::mirrored(std::size_t layer) const {
  return static_cast<bool>(planes_.at(layer).key_mirror);
}

void KvStorage::fill_mirror(int slot, cache::PageIndex page, int tokens) {
  if (tokens <= 0) return;
  for (std::size_t layer = 0; layer < layers(); ++layer) {
    if (mirrored(layer)) backend_.fill_mirror(devices_[layer], views_[layer], page, slot, tokens);
  }
}

std::int64_t KvStorage::mirror_bytes() const {
  std::int64_t bytes = 0;
  for (const Planes& planes : planes_)
    bytes += planes.mirror_bytes();
  return bytes;
}

std::int64_t KvStorage::mirror_bytes_on(int device) const {
  std::int64_t bytes = 0;
  for (std::size_t layer = 0; layer < planes_.size(); ++layer) {
    if (devices_[layer] == device) bytes += planes_[layer].mirror_bytes();
  }
  return bytes;
}

void KvStorage::set_planes(std::size_t layer, Planes planes) {
  planes_[layer] = std::move(planes);
  const Planes& p = planes_[layer];
  views_[layer].planes = kernels::KvPlanes{p.key_data.data(), p.key_scales.data(),
                                           p.value_data.data(), p.value_scales.data()};
  views_[layer].mirrors = p.key_mirror ? kernels::KvMirrors{p.key_mirror.data(),
                                                            p.value_mirror.data(), mirrors_.count()}
                                       : kernels::KvMirrors{};
}

void KvStorage::use_calibrated_scales(std::vector<LayerKvScales> scales) {
  for (std::size_t layer = 0; layer < layers(); ++layer) {
    if (placed(layer)) throw std::logic_error("calibrated scales given after a layer was placed");
  }
  if (scales.size() != layers()) {
    throw std::invalid_argument("calibrated K/V scales for " + std::to_string(scales.size()) +
                                " layers, but the cache has " + std::to_string(layers()));
  }
  for (std::size_t layer = 0; layer < scales.size(); ++layer) {
    const auto heads = static_cast<std::size_t>(shapes_[layer].kv_heads);
    if (scales[layer].key.size() != heads || scales[layer].value.size() != heads) {
      throw std::invalid_argument("calibrated K/V scales of layer " + std::to_string(layer) +
                                  " are not one per KV head");
    }
  }
  calibrated_scales_ = std::move(scales);
}

bool KvStorage::calibrated_keys() const {
  return !calibrated_scales_.empty() && config_.format.key == cache::ElementCoding::FP8;
}

bool KvStorage::calibrated_values() const {
  return !calibrated_scales_.empty() && config_.format.value == cache::ElementCoding::FP8;
}

bool KvStorage::writes_recode_pages() const {
  return (config_.format.key == cache::ElementCoding::FP8 && !calibrated_keys()) ||
         (config_.format.value == cache::ElementCoding::FP8 && !calibrated_values());
}

void KvStorage::place_layer(std::size_t layer, int device, PageHome home) {
  if (placed(layer)) throw std::logic_error("cache layer placed twice");
  if (home == PageHome::Host && windowed(layer)) {
    throw std::invalid_argument("the window pool's pages stay on their device");
  }
  ++generation_;
  set_planes(layer, allocate_planes(layer, device, home));
  if (calibrated_keys() || calibrated_values()) {
    // A few bytes per layer, on the device whose kernels encode its pages
    // (a host layer's staging device).
    const LayerKvScales& scales = calibrated_scales_[layer];
    std::vector<float> both(scales.key);
    both.insert(both.end(), scales.value.begin(), scales.value.end());
    kernels::DeviceBuffer buffer =
        backend_.allocate(device, both.size() * sizeof(float), "calibrated KV scales");
    backend_.copy(buffer.data(), device, both.data(), -1, both.size() * sizeof(float));
    const float* key = buffer.as<float>();
    views_[layer].calibrated = kernels::KvCalibratedScales{
        calibrated_keys() ? key : nullptr, calibrated_values() ? key + scales.key.size() : nullptr};
    calibrated_buffers_.push_back(std::move(buffer));
  }
  if (home == PageHome::Host) streamer_->add_layer(layer, device, views_[layer]);
  devices_[layer] = device;
  homes_[layer] = home;
  if (home == PageHome::Host) streamer_->reserve();
}

void KvStorage::move_to_host(std::size_t layer) {
  if (!placed(layer)) throw std::logic_error("an unplaced cache layer cannot move to host memory");
  if (homes_[layer] == PageHome::Host) return;
  if (windowed(layer)) throw std::invalid_argument("the window pool's pages stay on their device");
  const int device = devices_[layer];
  Planes host = allocate_planes(layer, device, PageHome::Host);
  const Planes& old = planes_[layer];
  const std::pair<const kernels::DeviceBuffer*, const kernels::DeviceBuffer*> pairs[] = {
      {&host.key_data, &old.key_data},
      {&host.key_scales, &old.key_scales},
      {&host.value_data, &old.value_data},
      {&host.value_scales, &old.value_scales}};
  for (const auto& [to, from] : pairs) {
    if (*from) backend_.copy(to->data(), -1, from->data(), device, from->bytes());
  }
  // The streamer learns of the layer before anything else changes, so that
  // a failure leaves the layer whole on its device. Its staging slots are
  // reserve_staging()'s: the device planes go first, and a device that ran
  // short has their room for the ring.
  const kernels::KvLayerView host_view{
      views_[layer].layout,
      kernels::KvPlanes{host.key_data.data(), host.key_scales.data(), host.value_data.data(),
                        host.value_scales.data()},
      views_[layer].calibrated};
  streamer_->add_layer(layer, device, host_view);
  ++generation_;
  set_planes(layer, std::move(host));
  homes_[layer] = PageHome::Host;
}

void KvStorage::reserve_staging() {
  streamer_->reserve();
}

void KvStorage::reserve_staging_for(std::size_t layer) {
  if (!placed(layer)) throw std::logic_error("an unplaced cache layer has no staging device");
  streamer_->reserve(devices_[layer], &views_[layer].layout);
}

std::int64_t KvStorage::offload_gain(int device) const {
  std::int64_t planes = 0;
  std::vector<kernels::KvLayerLayout> moving;
  for (std::size_t layer = 0; layer < layers(); ++layer) {
    if (devices_[layer] != device || homes_[layer] != PageHome::Device || windowed(layer)) continue;
    planes += page_bytes(layer) * config_.num_pages;
    moving.push_back(views_[layer].layout);
  }
  return planes - (streamer_->staging_bytes_needed(device, moving) -
                   streamer_->staging_bytes_needed(device));
}

std::int64_t KvStorage::staging_bytes() const {
  return streamer_->staging_bytes();
}

std::int64_t KvStorage::host_layer_bytes() const {
  std::int64_t bytes = 0;
  for (std::size_t layer = 0; layer < layers(); ++layer) {
    if (homes_[layer] == PageHome::Host) bytes += page_bytes(layer) * config_.num_pages;
  }
  return bytes;
}

void KvStorage::save_page(std::size_t layer, cache::PageIndex page, void* host) {
  if (homes_[layer] == PageHome::Host) {
    detail::host_save_page(views_[layer], page, host);
  } else {
    backend_.save_page(devices_[layer], views_[layer], page, host);
  }
}

void KvStorage::restore_page(std::size_t layer, cache::PageIndex page, const void* host) {
  if (homes_[layer] == PageHome::Host) {
    detail::host_restore_page(views_[layer], page, host);
  } else {
    backend_.restore_page(devices_[layer], views_[layer], page, host);
  }
}

void KvStorage::copy_page_tokens(std::size_t layer, cache::PageIndex source,
                                 cache::PageIndex destination, int tokens) {
  if (homes_[layer] == PageHome::Host) {
    detail::host_copy_page_tokens(views_[layer], source, destination, tokens);
  } else {
    backend_.copy_page_tokens(devices_[layer], views_[layer], source, destination, tokens);
  }
}

void KvStorage::begin_step(std::span<const StepPages> sequences, std::span<const int> windows) {
  streamer_->begin_step(sequences, windows);
}

const kernels::KvLayerView& KvStorage::attend(std::size_t layer) {
  if (homes_.at(layer) == PageHome::Device) return views_[layer];
  return streamer_->attend(layer);
}

void KvStorage::attended(std::size_t layer) {
  if (homes_.at(layer) == PageHome::Host) streamer_->attended(layer);
}

void KvStorage::settle() {
  streamer_->settle();
}

std::int64_t KvStorage::step_copy_bytes() const {
  return streamer_->step_copy_bytes();
}

std::uint8_t* KvStorage::host_slot(cache::HostSlot slot, std::size_t layer) {
  if (slot < 0 || slot >= config_.host_pages) throw std::out_of_range("no such host slot");
  return host_.get() + slot * host_slot_bytes_ + host_offsets_[layer];
}

void KvStorage::save_to_host(std::span<const cache::HostSave> saves) {
  if (saves.empty()) return;
  settle();
  for (const cache::HostSave& save : saves) {
    for (std::size_t layer = 0; layer < layers(); ++layer) {
      if (!placed(layer) || windowed(layer)) continue;
      save_page(layer, save.page, host_slot(save.slot, layer));
    }
  }
}

void KvStorage::execute(const cache::CacheInstructions& instructions) {
  save_to_host(instructions.saves);
  if (!instructions.restores.empty() || !instructions.copies.empty() ||
      !instructions.window_copies.empty())
    settle();
  // Pages written here, not by write_kv: their mirrors would be stale.
  for (const cache::HostRestore& restore : instructions.restores)
    mirrors_.forget(restore.page);
  for (const cache::PageCopy& copy : instructions.copies)
    mirrors_.forget(copy.destination);
  for (const cache::HostRestore& restore : instructions.restores) {
    for (std::size_t layer = 0; layer < layers(); ++layer) {
      if (!placed(layer) || windowed(layer)) continue;
      restore_page(layer, restore.page, host_slot(restore.slot, layer));
    }
  }
  for (const cache::PageCopy& copy : instructions.copies) {
    for (std::size_t layer = 0; layer < layers(); ++layer) {
      if (!placed(layer) || windowed(layer)) continue;
      copy_page_tokens(layer, copy.source, copy.destination, copy.tokens);
    }
  }
  for (const cache::PageCopy& copy : instructions.window_copies) {
    for (std::size_t layer = 0; layer < layers(); ++layer) {
      if (!placed(layer) || !windowed(layer)) continue;
      copy_page_tokens(layer, copy.source, copy.destination, copy.tokens);
    }
  }
}

std::int64_t KvStorage::block_bytes() const {
  std::int64_t bytes = 0;
  for (std::size_t layer = 0; layer < layers(); ++layer) {
    if (placed(layer) && !windowed(layer)) bytes += page_bytes(layer);
  }
  return bytes;
}

void KvStorage::read_page(cache::PageIndex page, std::span<std::byte> block) {
  if (static_cast<std::int64_t>(block.size()) != block_bytes()) {
    throw std::invalid_argument("a page block of " + std::to_string(block.size()) +
                                " bytes for pages of " + std::to_string(block_bytes()));
  }
  settle();
  std::byte* out = block.data();
  for (std::size_t layer = 0; layer < layers(); ++layer) {
    if (!placed(layer) || windowed(layer)) continue;
    save_page(layer, page, out);
    out += page_bytes(layer);
  }
}

void KvStorage::write_page(cache::PageIndex page, std::span<const std::byte> block) {
  if (static_cast<std::int64_t>(block.size()) != block_bytes()) {
    throw std::invalid_argument("a page block of " + std::to_string(block.size()) +
                                " bytes for pages of " + std::to_string(block_bytes()));
  }
  settle();
  mirrors_.forget(page);
  const std::byte* in = block.data();
  for (std::size_t layer = 0; layer < layers(); ++layer) {
    if (!placed(layer) || windowed(layer)) continue;
    restore_page(layer, page, in);
    in += page_bytes(layer);
  }
}

void KvStorage::apply_moves(const cache::DefragPlan& plan) {
  if (plan.moves.empty()) return;
  settle();
  mirrors_.forget_all();
  std::vector<std::uint8_t> buffer;
  for (std::size_t layer = 0; layer < layers(); ++layer) {
    if (!placed(layer) || windowed(layer)) continue;  // the main pool's moves
    buffer.resize(static_cast<std::size_t>(page_bytes(layer)));
    cache::PageMoveOps ops;
    ops.copy = [&](cache::PageIndex from, cache::PageIndex to) {
      copy_page_tokens(layer, from, to, config_.page_size);
    };
    ops.to_buffer = [&](cache::PageIndex from) { save_page(layer, from, buffer.data()); };
    ops.from_buffer = [&](cache::PageIndex to) { restore_page(layer, to, buffer.data()); };
    cache::execute_page_moves(plan.moves, ops);
  }
}

}  // namespace quire::engine
