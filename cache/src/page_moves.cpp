#include "quire/cache/page_moves.h"

#include <stdexcept>

namespace quire::cache {

void execute_page_moves(std::span<const PageMoveChain> chains, const PageMoveOps& ops) {
  for (const PageMoveChain& chain : chains) {
    const std::vector<PageIndex>& pages = chain.pages;
    if (pages.size() < 2) throw std::invalid_argument("a page move chain needs two pages");
    // Walk backwards: each destination has already handed its own content on.
    if (chain.cycle) ops.to_buffer(pages.back());
    for (std::size_t i = pages.size() - 1; i > 0; --i)
      ops.copy(pages[i - 1], pages[i]);
    if (chain.cycle) ops.from_buffer(pages.front());
  }
}

int count_page_copies(std::span<const PageMoveChain> chains) {
  int copies = 0;
  for (const PageMoveChain& chain : chains) {
    copies += static_cast<int>(chain.pages.size()) - 1 + (chain.cycle ? 2 : 0);
  }
  return copies;
}

}  // namespace quire::cache
