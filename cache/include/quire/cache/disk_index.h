#pragma once

#include <optional>

#include "quire/cache/page_hash.h"
#include "quire/cache/types.h"

namespace quire::cache {

// The disk tier as the bookkeeping sees it: which full pages it can give
// back, by chain hash. The engine implements it over its page store and moves
// the bytes (DiskSave, DiskRestore); the bookkeeping only asks. An answer may
// go stale (another process may remove a file): a restore that then fails is
// abandoned and the pages are computed (PageCache::abandon).
class DiskIndex {
 public:
  virtual ~DiskIndex() = default;
  virtual bool holds(const PageHash& hash) const = 0;
};

// Write device page `page`, a full page with chain hash `hash` whose parent
// page is `parent` (none for a sequence's first page), to the disk tier
// before the page is reused.
struct DiskSave {
  PageIndex page = kNoPage;
  PageHash hash;
  std::optional<PageHash> parent;
  friend bool operator==(const DiskSave&, const DiskSave&) = default;
};

// Read the page stored on disk under `hash` into device page `page`.
struct DiskRestore {
  PageHash hash;
  PageIndex page = kNoPage;
  friend bool operator==(const DiskRestore&, const DiskRestore&) = default;
};

}  // namespace quire::cache
