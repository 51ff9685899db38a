#pragma once

#include <functional>
#include <span>
#include <vector>

#include "quire/cache/types.h"

namespace quire::cache {

// A chain of page moves: the content of pages[i] goes to pages[i + 1]. In an
// open chain the last page's old content is not needed (it is free); in a cycle
// the last page's content goes to pages[0], through a one-page buffer.
struct PageMoveChain {
  std::vector<PageIndex> pages;
  bool cycle = false;

  friend bool operator==(const PageMoveChain&, const PageMoveChain&) = default;
};

// What the engine does with the bytes of one page in every layer's storage.
struct PageMoveOps {
  std::function<void(PageIndex from, PageIndex to)> copy;
  std::function<void(PageIndex from)> to_buffer;
  std::function<void(PageIndex to)> from_buffer;
};

// Executes chains in an order that never overwrites content still to be moved.
void execute_page_moves(std::span<const PageMoveChain> chains, const PageMoveOps& ops);

// Page copies (buffer use counted as one copy each way) the chains need.
int count_page_copies(std::span<const PageMoveChain> chains);

}  // namespace quire::cache
