#pragma once

// Buffers that outlive one product and are lent to the next on the same
// thread. A decode step runs hundreds of small products; allocating (and
// zero-filling) their inputs and partial sums afresh each time cost as much
// as the arithmetic of the smaller ones.

#include <cstddef>
#include <memory>
#include <vector>

namespace quire::kernels::linear_detail {

// Lends a T of the calling thread's spares for the lease's lifetime (a fresh
// one when all are lent, as in a product of several weights at once). The
// contents are whatever the last borrower left: borrowers size and fill
// what they read.
template <typename T>
class ScratchLease {
 public:
  ScratchLease() {
    std::vector<std::unique_ptr<T>>& spares = spare_list();
    if (spares.empty()) {
      item_ = std::make_unique<T>();
    } else {
      item_ = std::move(spares.back());
      spares.pop_back();
    }
  }
  ~ScratchLease() {
    if (item_) spare_list().push_back(std::move(item_));
  }
  ScratchLease(ScratchLease&&) noexcept = default;
  ScratchLease& operator=(ScratchLease&&) noexcept = default;
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

  T& operator*() const { return *item_; }
  T* operator->() const { return item_.get(); }

 private:
  static std::vector<std::unique_ptr<T>>& spare_list() {
    thread_local std::vector<std::unique_ptr<T>> spares;
    return spares;
  }

  std::unique_ptr<T> item_;
};

// Resizes only to grow: what a borrower does not write it does not read, so
// the zero-filling of a shrink-then-grow is wasted.
template <typename T>
void grow_to(std::vector<T>& buffer, std::size_t size) {
  if (buffer.size() < size) buffer.resize(size);
}

}  // namespace quire::kernels::linear_detail
