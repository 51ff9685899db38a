#pragma once

#include <cstdint>

namespace quire::cache {

// Source of access stamps for least-recently-used decisions. The default is a
// logical counter, which makes the cache deterministic; tests inject their own.
class Clock {
 public:
  virtual ~Clock() = default;
  // A stamp no smaller than any returned before.
  virtual std::uint64_t now() = 0;
};

class LogicalClock final : public Clock {
 public:
  std::uint64_t now() override { return ++ticks_; }

 private:
  std::uint64_t ticks_ = 0;
};

}  // namespace quire::cache
