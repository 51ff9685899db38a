#include "quire/engine/runtime/kv_storage.h"

#include <stdexcept>

namespace quire::engine {

std::pair<kernels::KvCoding, kernels::KvCoding> kv_codings(cache::CacheFormat format) {
  using kernels::KvCoding;
  switch (format) {
    case cache::CacheFormat::FP16:
      return {KvCoding::Fp16, KvCoding::Fp16};
    case cache::CacheFormat::Q8:
      return {KvCoding::Int8, KvCoding::Int8};
    case cache::CacheFormat::Q6:
      return {KvCoding::Int8, KvCoding::Int4};
    case cache::CacheFormat::Q4:
      return {KvCoding::Int4, KvCoding::Int4};
    case cache::CacheFormat::FP8:
      return {KvCoding::Fp8, KvCoding::Fp8};
  }
  throw std::invalid_argument("unknown cache format");
}

KvStorage::KvStorage(kernels::Backend& backend, Config config,
                     std::vector<cache::LayerShape> layers)
    : backend_(backend),
      config_(config),
      shapes_(std::move(layers)),
      devices_(shapes_.size(), -1),
      planes_(shapes_.size()),
      views_(shapes_.size()) {
  const auto [key, value] = kv_codings(config_.format);
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    views_[i].layout = kernels::make_kv_layout(key, value, config_.page_size, shapes_[i].kv_heads,
                                               shapes_[i].head_dim, config_.num_pages);
    host_offsets_.push_back(host_slot_bytes_);
    host_slot_bytes_ += page_bytes(i);
  }
  if (config_.host_pages > 0) {
    host_.resize(static_cast<std::size_t>(host_slot_bytes_ * config_.host_pages));
  }
}

std::int64_t KvStorage::page_bytes(std::size_t layer) const {
  const kernels::KvLayerLayout& layout = views_.at(layer).layout;
  return layout.key_data_page_bytes + layout.key_scale_page_bytes + layout.value_data_page_bytes +
         layout.value_scale_page_bytes;
}

void KvStorage::place_layer(std::size_t layer, int device) {
  if (placed(layer)) throw std::logic_error("cache layer placed twice");
  const kernels::KvLayerLayout& layout = views_.at(layer).layout;
  Planes& planes = planes_[layer];
  ++generation_;
  auto allocate = [&](std::int64_t page_bytes) {
    if (page_bytes == 0) return kernels::DeviceBuffer();
    const auto bytes = static_cast<std::size_t>(page_bytes * layout.num_pages);
    kernels::DeviceBuffer buffer = backend_.allocate(device, bytes, "KV cache");
    // FP8 pages read their scale as "nothing written yet" when it is zero.
    backend_.fill_zero(device, buffer.data(), bytes);
    return buffer;
  };
  planes.key_data = allocate(layout.key_data_page_bytes);
  planes.key_scales = allocate(layout.key_scale_page_bytes);
  planes.value_data = allocate(layout.value_data_page_bytes);
  planes.value_scales = allocate(layout.value_scale_page_bytes);
  views_[layer].planes = kernels::KvPlanes{planes.key_data.data(), planes.key_scales.data(),
                                           planes.value_data.data(), planes.value_scales.data()};
  devices_[layer] = device;
}

std::uint8_t* KvStorage::host_slot(cache::HostSlot slot, std::size_t layer) {
  if (slot < 0 || slot >= config_.host_pages) throw std::out_of_range("no such host slot");
  return host_.data() + slot * host_slot_bytes_ + host_offsets_[layer];
}

void KvStorage::save_to_host(std::span<const cache::HostSave> saves) {
  for (const cache::HostSave& save : saves) {
    for (std::size_t layer = 0; layer < layers(); ++layer) {
      if (!placed(layer)) continue;
      backend_.save_page(devices_[layer], views_[layer], save.page, host_slot(save.slot, layer));
    }
  }
}

void KvStorage::execute(const cache::CacheInstructions& instructions) {
  save_to_host(instructions.saves);
  for (const cache::HostRestore& restore : instructions.restores) {
    for (std::size_t layer = 0; layer < layers(); ++layer) {
      if (!placed(layer)) continue;
      backend_.restore_page(devices_[layer], views_[layer], restore.page,
                            host_slot(restore.slot, layer));
    }
  }
  for (const cache::PageCopy& copy : instructions.copies) {
    for (std::size_t layer = 0; layer < layers(); ++layer) {
      if (!placed(layer)) continue;
      backend_.copy_page_tokens(devices_[layer], views_[layer], copy.source, copy.destination,
                                copy.tokens);
    }
  }
}

void KvStorage::apply_moves(const cache::DefragPlan& plan) {
  std::vector<std::uint8_t> buffer;
  for (std::size_t layer = 0; layer < layers(); ++layer) {
    if (!placed(layer)) continue;
    const int device = devices_[layer];
    const kernels::KvLayerView& view = views_[layer];
    buffer.resize(static_cast<std::size_t>(page_bytes(layer)));
    cache::PageMoveOps ops;
    ops.copy = [&](cache::PageIndex from, cache::PageIndex to) {
      backend_.copy_page_tokens(device, view, from, to, config_.page_size);
    };
    ops.to_buffer = [&](cache::PageIndex from) {
      backend_.save_page(device, view, from, buffer.data());
    };
    ops.from_buffer = [&](cache::PageIndex to) {
      backend_.restore_page(device, view, to, buffer.data());
    };
    cache::execute_page_moves(plan.moves, ops);
  }
}

}  // namespace quire::engine
