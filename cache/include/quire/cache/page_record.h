#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "quire/cache/page_hash.h"
#include "quire/cache/types.h"

namespace quire::cache {

// Where a page sits in its hash chain.
enum class ChainLink : std::uint8_t {
  Root,     // first page of a sequence: hashed without a previous hash
  Known,    // `previous` holds the previous page's hash
  Unknown,  // the previous page has no hash yet
};

// What a page holds: which tokens, how much of their K/V is written, and its
// place in the hash chain.
struct PageIdentity {
  PageHash hash;        // chain hash when `hashed`, else a unique placeholder
  bool hashed = false;  // full page with its real chain hash
  ChainLink link = ChainLink::Unknown;
  PageHash previous;            // meaningful when link == Known
  std::int32_t filled = 0;      // token ids known: tokens[0, filled)
  std::int32_t valid = 0;       // K/V written: tokens[0, valid), valid <= filled
  std::vector<TokenId> tokens;  // page_size entries; only [0, filled) matter
};

enum class PageState : std::uint8_t {
  Free,        // no content
  Referenced,  // reference count > 0
  Cached,      // reference count 0, content still valid under its identity
};

struct PageRecord {
  PageIdentity identity;
  // Identity the page had before it was taken for a sequence. While nothing has
  // been written into the page, releasing it gives this identity back.
  std::optional<PageIdentity> saved;
  bool indexed = false;  // registered in the hash index under identity.hash
  // The page's content was read back from the disk tier (for the page map);
  // false once the page is taken for other content.
  bool from_disk = false;
  std::int32_t refs = 0;
  std::uint64_t last_access = 0;

  PageState state() const {
    if (refs > 0) return PageState::Referenced;
    return identity.valid > 0 ? PageState::Cached : PageState::Free;
  }
  // Bytes in the page that must survive a move: written K/V, or the K/V of a
  // previous identity that may still be given back.
  bool holds_content() const { return identity.valid > 0 || saved.has_value(); }
};

const char* to_string(PageState state);

}  // namespace quire::cache
