#include "quire/cache/host_tier.h"

#include <algorithm>
#include <stdexcept>

namespace quire::cache {

HostTier::HostTier(int slots) {
  if (slots < 0) throw std::invalid_argument("host tier size must not be negative");
  slots_.resize(static_cast<std::size_t>(slots));
}

std::optional<HostSlot> HostTier::find(const PageHash& hash) const {
  auto found = index_.find(hash);
  if (found == index_.end()) return std::nullopt;
  return found->second;
}

std::optional<HostSlot> HostTier::choose_slot(std::span<const HostSlot> pinned) const {
  std::optional<HostSlot> oldest;
  for (HostSlot slot = 0; slot < capacity(); ++slot) {
    if (std::find(pinned.begin(), pinned.end(), slot) != pinned.end()) continue;
    const Slot& record = slots_[static_cast<std::size_t>(slot)];
    if (!record.occupied) return slot;
    if (!oldest || record.last_access < slots_[static_cast<std::size_t>(*oldest)].last_access) {
      oldest = slot;
    }
  }
  return oldest;
}

void HostTier::store(HostSlot slot, const PageIdentity& identity, std::uint64_t now) {
  if (!identity.hashed) throw std::logic_error("only hashed pages go to the host tier");
  Slot& record = slots_.at(static_cast<std::size_t>(slot));
  if (record.occupied) index_.erase(record.identity.hash);
  record.identity = identity;
  record.occupied = true;
  record.last_access = now;
  auto [where, inserted] = index_.emplace(identity.hash, slot);
  if (!inserted) throw std::logic_error("page hash stored twice in the host tier");
}

void HostTier::forget(HostSlot slot) {
  Slot& record = slots_.at(static_cast<std::size_t>(slot));
  if (!record.occupied) return;
  index_.erase(record.identity.hash);
  record.occupied = false;
}

std::vector<std::string> HostTier::check_invariants() const {
  std::vector<std::string> problems;
  std::size_t occupied = 0;
  for (HostSlot slot = 0; slot < capacity(); ++slot) {
    const Slot& record = slots_[static_cast<std::size_t>(slot)];
    if (!record.occupied) continue;
    ++occupied;
    auto found = index_.find(record.identity.hash);
    if (found == index_.end() || found->second != slot) {
      problems.push_back("host slot " + std::to_string(slot) + " is not indexed under its hash");
    }
    if (!record.identity.hashed) {
      problems.push_back("host slot " + std::to_string(slot) + " holds an unhashed page");
    }
  }
  if (occupied != index_.size()) {
    problems.push_back("host index has " + std::to_string(index_.size()) + " entries for " +
                       std::to_string(occupied) + " occupied slots");
  }
  return problems;
}

}  // namespace quire::cache
