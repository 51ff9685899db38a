#pragma once

// Counts the bytes that operator new hands out, for checking a price of
// host memory against what code really allocates. The executable that
// includes allocation_counter.cpp replaces the global operator new and
// delete; they count only while an AllocationCounting scope is open.

#include <cstdint>

namespace quire::test {

class AllocationCounting {
 public:
  AllocationCounting();  // starts counting from zero
  ~AllocationCounting();
  AllocationCounting(const AllocationCounting&) = delete;
  AllocationCounting& operator=(const AllocationCounting&) = delete;

  // Bytes allocated in the scope and not yet freed, and the most that were.
  // Frees of blocks allocated before the scope are not counted.
  std::int64_t live() const;
  std::int64_t peak() const;
};

}  // namespace quire::test
