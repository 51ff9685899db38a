#include "quire/kernels/backend.h"

#include <stdexcept>
#include <string>

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
    : std::runtime_error("device " + std::to_string(device) + ": needs " +
                         readable(requested - available) + " more for the " + std::string(purpose) +
                         " (" + readable(requested) + " requested, " + readable(available) +
                         " free)"),
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
  if (owner_ && data_) owner_->release(device_, data_, bytes_);
  owner_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

void Backend::linear_many(int device, const float* x, std::int64_t rows,
                          std::span<const LinearWeight* const> weights,
                          std::span<float* const> outs) {
  if (weights.size() != outs.size()) {
    throw std::invalid_argument("linear_many: " + std::to_string(weights.size()) + " weights but " +
                                std::to_string(outs.size()) + " outputs");
  }
  for (std::size_t i = 0; i < weights.size(); ++i)
    linear(device, x, rows, *weights[i], outs[i]);
}

}  // namespace quire::kernels
