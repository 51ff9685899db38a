#include "quire/kernels/backend.h"

namespace quire::kernels {
namespace {

std::string mib(std::int64_t bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

}  // namespace

DeviceOutOfMemory::DeviceOutOfMemory(int device, std::int64_t requested, std::int64_t available,
                                     std::string_view purpose)
    : std::runtime_error("device " + std::to_string(device) + ": needs " +
                         mib(requested - available) + " more for the " + std::string(purpose) +
                         " (" + mib(requested) + " requested, " + mib(available) + " free)"),
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

}  // namespace quire::kernels
