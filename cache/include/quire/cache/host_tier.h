#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "quire/cache/page_record.h"

namespace quire::cache {

// Bookkeeping of the second cache tier in host memory: full pages evicted from
// the device, keyed by the same chain hashes. The engine moves the bytes.
class HostTier {
 public:
  explicit HostTier(int slots);

  int capacity() const { return static_cast<int>(slots_.size()); }
  int used() const { return static_cast<int>(index_.size()); }

  std::optional<HostSlot> find(const PageHash& hash) const;
  const PageIdentity& identity(HostSlot slot) const { return slots_.at(slot).identity; }
  bool occupied(HostSlot slot) const { return slots_.at(slot).occupied; }

  // Where a new page would be stored: the lowest free slot not in `pinned`,
  // else the least recently used occupied one not in `pinned`. Nothing if
  // every slot is pinned.
  std::optional<HostSlot> choose_slot(std::span<const HostSlot> pinned) const;

  // Stores a full, hashed page identity in `slot`, replacing what was there.
  void store(HostSlot slot, const PageIdentity& identity, std::uint64_t now);
  void touch(HostSlot slot, std::uint64_t now) { slots_.at(slot).last_access = now; }
  // Empties `slot`: its bytes cannot be trusted (the save into it failed).
  void forget(HostSlot slot);

  // Descriptions of broken invariants; empty when consistent.
  std::vector<std::string> check_invariants() const;

 private:
  struct Slot {
    PageIdentity identity;
    bool occupied = false;
    std::uint64_t last_access = 0;
  };
  std::vector<Slot> slots_;
  std::unordered_map<PageHash, HostSlot, PageHashHasher> index_;
};

}  // namespace quire::cache
