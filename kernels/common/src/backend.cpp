#include "quire/kernels/backend.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace quire::kernels {
namespace {

// Rounded up, so "needs" never understates: KiB below 1 MiB, MiB below 10 GiB.
std::string readable(std::int64_t bytes) {
  constexpr std::int64_t kKiB = 1 << 10, kMiB = 1 << 20, kGiB = std::int64_t{1} << 30;
  if (bytes < kMiB) return std::to_string((bytes + kKiB - 1) / kKiB) + " KiB";
  if (bytes < 10 * kGiB) return std::to_string((bytes + kMiB - 1) / kMiB) + " MiB";
  return std::to_string((bytes + kGiB - 1) / kGiB) + " GiB";
}

}  // namespace

DeviceOutOfMemory::DeviceOutOfMemory(int device, std::int64_t requested, std::int64_t available,
                                     std::string_view purpose)
    : std::runtime_error(
          (device < 0 ? std::string("host memory") : "device " + std::to_string(device)) +
          ": needs " + readable(requested - available) + " more for the " + std::string(purpose) +
          " (" + readable(requested) + " requested, " + readable(available) + " free)"),
      device_(device),
      requested_(requested),
      available_(available) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = other.owner_;
    device_ = other.device_;
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.owner_ = nullptr;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (owner_ && data_) {
    if (device_ < 0) {
      owner_->release_host(data_, bytes_);
    } else {
      owner_->release(device_, data_, bytes_);
    }
  }
  owner_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

DeviceBuffer Backend::allocate_host(std::size_t bytes, std::string_view purpose) {
  // Cache lines apart, and rounded up as aligned_alloc requires.
  constexpr std::size_t kAlignment = 64;
  const std::size_t rounded =
      (std::max<std::size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded);
  if (data == nullptr) throw DeviceOutOfMemory(-1, static_cast<std::int64_t>(bytes), 0, purpose);
  return DeviceBuffer(this, -1, data, bytes);
}

void Backend::release_host(void* data, std::size_t) noexcept {
  std::free(data);
}

void Backend::copy_async(Queue queue, int device, void* destination, const void* source,
                         std::size_t bytes) {
  if (queue == Queue::Compute) {
    throw std::invalid_argument("copy_async runs on the Upload or Download queue");
  }
  const bool upload = queue == Queue::Upload;
  copy(destination, upload ? device : -1, source, upload ? -1 : device, bytes);
}

std::unique_ptr<QueueEvent> Backend::create_event(int) {
  return std::make_unique<QueueEvent>();
}

void Backend::record_event(QueueEvent&, int, Queue) {}

void Backend::wait_event(const QueueEvent&, int, Queue) {}

void Backend::synchronize_event(const QueueEvent&, int) {}

void Backend::linear_many(int device, const float* x, std::int64_t rows,
                          std::span<const LinearWeight* const> weights,
                          std::span<float* const> outs, ProductRows kind) {
  if (weights.size() != outs.size()) {
    throw std::invalid_argument("linear_many: " + std::to_string(weights.size()) + " weights but " +
                                std::to_string(outs.size()) + " outputs");
  }
  for (std::size_t i = 0; i < weights.size(); ++i)
    linear(device, x, rows, *weights[i], outs[i], kind);
}

void Backend::top_logits(int device, const float* logits, std::int64_t rows, std::int64_t vocab,
                         int k, const float* inv_temperatures, float* values, std::int32_t* ids,
                         TopLogitsStats* stats) {
  check_top_logits(rows, vocab, k);
  if (rows == 0) return;
  const auto n = static_cast<std::size_t>(rows);
  const std::size_t outputs = n * static_cast<std::size_t>(k);
  std::vector<float> host_logits(n * static_cast<std::size_t>(vocab)), host_scales(n);
  copy(host_logits.data(), -1, logits, device, host_logits.size() * sizeof(float));
  copy(host_scales.data(), -1, inv_temperatures, device, n * sizeof(float));
  std::vector<float> host_values(outputs);
  std::vector<std::int32_t> host_ids(outputs);
  std::vector<TopLogitsStats> host_stats(n);
  top_logits_host(host_logits.data(), rows, vocab, k, host_scales.data(), host_values.data(),
                  host_ids.data(), host_stats.data());
  copy(values, device, host_values.data(), -1, outputs * sizeof(float));
  copy(ids, device, host_ids.data(), -1, outputs * sizeof(std::int32_t));
  copy(stats, device, host_stats.data(), -1, n * sizeof(TopLogitsStats));
}

void Backend::gather_logits(int device, const float* logits, std::int64_t row_count,
                            std::int64_t vocab, const std::int32_t* rows, const std::int32_t* ids,
                            std::int64_t count, float* out) {
  if (count <= 0) return;
  const auto n = static_cast<std::size_t>(count);
  std::vector<float> host_logits(static_cast<std::size_t>(row_count * vocab)), host_out(n);
  std::vector<std::int32_t> host_rows(n), host_ids(n);
  copy(host_logits.data(), -1, logits, device, host_logits.size() * sizeof(float));
  copy(host_rows.data(), -1, rows, device, n * sizeof(std::int32_t));
  copy(host_ids.data(), -1, ids, device, n * sizeof(std::int32_t));
  gather_logits_host(host_logits.data(), row_count, vocab, host_rows.data(), host_ids.data(), count,
                     host_out.data());
  copy(out, device, host_out.data(), -1, n * sizeof(float));
}

}  // namespace quire::kernels

namespace quire::kernels {

void check_rope(const RopeParams& rope, int head_dim) {
  if (rope.rotary_dim <= 0 || rope.rotary_dim > head_dim || rope.rotary_dim % 2 != 0) {
    throw std::invalid_argument("rotary dimension " + std::to_string(rope.rotary_dim) +
                                " does not fit head_dim " + std::to_string(head_dim));
  }
  const std::array<int, 3>& section = rope.mrope_section;
  if (!rope.multimodal()) return;
  if (section[0] < 0 || section[1] < 0 || section[2] < 0 ||
      section[0] + section[1] + section[2] != rope.rotary_dim / 2) {
    throw std::invalid_argument("M-RoPE sections [" + std::to_string(section[0]) + ", " +
                                std::to_string(section[1]) + ", " + std::to_string(section[2]) +
                                "] do not add up to the " + std::to_string(rope.rotary_dim / 2) +
                                " frequencies of rotary dimension " +
                                std::to_string(rope.rotary_dim));
  }
}

}  // namespace quire::kernels
