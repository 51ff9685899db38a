#include "allocation_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

// Each block starts with a header holding its size and whether it was
// counted, so that delete knows what to take off.
struct alignas(std::max_align_t) Header {
  std::size_t size;
  bool counted;
};

std::atomic<bool> counting{false};
std::atomic<std::int64_t> live_bytes{0};
std::atomic<std::int64_t> peak_bytes{0};

void* allocate(std::size_t size) {
  void* block = std::malloc(sizeof(Header) + size);
  if (block == nullptr) throw std::bad_alloc();
  auto* header = static_cast<Header*>(block);
  header->size = size;
  header->counted = counting.load();
  if (header->counted) {
    const std::int64_t now = live_bytes += static_cast<std::int64_t>(size);
    std::int64_t peak = peak_bytes.load();
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
    }
  }
  return header + 1;
}

void release(void* pointer) noexcept {
  if (pointer == nullptr) return;
  Header* header = static_cast<Header*>(pointer) - 1;
  if (header->counted) live_bytes -= static_cast<std::int64_t>(header->size);
  std::free(header);
}

}  // namespace

void* operator new(std::size_t size) {
  return allocate(size);
}
void* operator new[](std::size_t size) {
  return allocate(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* pointer) noexcept {
  release(pointer);
}
void operator delete[](void* pointer) noexcept {
  release(pointer);
}
void operator delete(void* pointer, std::size_t) noexcept {
  release(pointer);
}
void operator delete[](void* pointer, std::size_t) noexcept {
  release(pointer);
}
void operator delete(void* pointer, const std::nothrow_t&) noexcept {
  release(pointer);
}
void operator delete[](void* pointer, const std::nothrow_t&) noexcept {
  release(pointer);
}

namespace quire::test {

AllocationCounting::AllocationCounting() {
  live_bytes = 0;
  peak_bytes = 0;
  counting = true;
}

AllocationCounting::~AllocationCounting() {
  counting = false;
}

std::int64_t AllocationCounting::live() const {
  return live_bytes.load();
}

std::int64_t AllocationCounting::peak() const {
  return peak_bytes.load();
}

}  // namespace quire::test
