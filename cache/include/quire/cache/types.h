#pragma once

#include <cstdint>

namespace quire::cache {

// Token ids fit in 32 bits for every vocabulary Quire loads; they are widened to
// int64 only when a page is hashed, to match exllamav2's page identity.
using TokenId = std::int32_t;

// A page index addresses the same slot in every layer's storage.
using PageIndex = std::int32_t;

// Slot in the host-memory tier.
using HostSlot = std::int32_t;

// Sequences are numbered in admission order; a larger id is a younger sequence.
using SequenceId = std::uint64_t;

inline constexpr PageIndex kNoPage = -1;

}  // namespace quire::cache
