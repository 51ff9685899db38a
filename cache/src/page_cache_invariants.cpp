// A full consistency check of the cache's bookkeeping against a recount. Used
// by the randomized tests after every operation, and cheap enough for debug
// builds of the engine.

#include <algorithm>
#include <map>
#include <sstream>

#include "quire/cache/page_cache.h"

namespace quire::cache {
namespace {

std::string page_name(PageIndex index) {
  return "page " + std::to_string(index);
}

}  // namespace

std::vector<std::string> PageCache::check_invariants() const {
  std::vector<std::string> problems;
  auto fail = [&](std::string text) { problems.push_back(std::move(text)); };
  const std::int32_t size = config_.page_size;

  // Reference counts equal the page-table entries pointing at each page.
  std::vector<std::int32_t> entries(pages_.size(), 0);
  for (const auto& [id, seq] : sequences_) {
    for (const PageIndex index : seq.pages) {
      // A sliding window hands pages back (and takes them late).
      if (index == kNoPage && config_.window > 0) continue;
      if (index < 0 || index >= config_.num_pages) {
        fail("sequence " + std::to_string(id) + " points at " + page_name(index));
        continue;
      }
      ++entries[static_cast<std::size_t>(index)];
    }
  }

  StateCounts recount;
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    const PageRecord& page = this->page(index);
    const PageIdentity& identity = page.identity;
    const std::string name = page_name(index);
    if (page.refs != entries[static_cast<std::size_t>(index)]) {
      fail(name + " has reference count " + std::to_string(page.refs) + " but " +
           std::to_string(entries[static_cast<std::size_t>(index)]) + " page-table entries");
    }
    const PageState state = page.state();
    const bool listed_free = free_.contains(index);
    if (listed_free != (state == PageState::Free)) {
      fail(name + " is " + to_string(state) + (listed_free ? " but on" : " but not on") +
           " the free list");
    }
    if (listed_free && page.refs > 0) fail(name + " is both free and referenced");
    switch (state) {
      case PageState::Free:
        ++recount.free;
        if (page.indexed || page.saved) fail(name + " is free but keeps an identity");
        break;
      case PageState::Referenced:
        ++recount.referenced;
        break;
      case PageState::Cached:
        ++recount.cached;
        if (identity.hashed && !page.indexed)
          fail(name + " is cached under a hash it is not indexed by");
        break;
    }
    if (page.refs > 1) ++recount.shared;
    if (page.refs < 0) fail(name + " has a negative reference count");
    if (identity.valid < 0 || identity.valid > identity.filled || identity.filled > size) {
      fail(name + " has valid " + std::to_string(identity.valid) + ", filled " +
           std::to_string(identity.filled));
    }
    if (page.saved && (page.refs == 0 || identity.valid > 0)) {
      fail(name + " keeps a previous identity although it is " +
           (page.refs == 0 ? "unreferenced" : "written"));
    }
    if (page.indexed) {
      auto found = index_.find(identity.hash);
      if (found == index_.end() || found->second != index) {
        fail(name + " is marked indexed but the index does not point at it");
      }
      if (!identity.hashed) fail(name + " is indexed under a placeholder");
      if (page.refs == 0 && identity.valid != size) {
        fail(name + " is cached under its hash with only " + std::to_string(identity.valid) +
             " valid tokens");
      }
    }
    if (identity.hashed) {
      if (identity.filled != size) fail(name + " is hashed but not full");
      if (identity.link == ChainLink::Unknown) {
        fail(name + " is hashed without a known chain link");
      } else {
        const PageHash* previous = identity.link == ChainLink::Known ? &identity.previous : nullptr;
        if (hash_page(previous, identity.tokens) != identity.hash) {
          fail(name + " carries a hash that does not match its tokens");
        }
      }
    }
  }
  for (const auto& [hash, index] : index_) {
    if (index < 0 || index >= config_.num_pages) {
      fail("index entry " + hash.hex() + " points at " + page_name(index));
    } else if (!page(index).indexed || page(index).identity.hash != hash) {
      fail("index entry " + hash.hex() + " points at " + page_name(index) +
           " which does not hold it");
    }
  }
  if (recount.free != counts_.free || recount.referenced != counts_.referenced ||
      recount.cached != counts_.cached || recount.shared != counts_.shared) {
    std::ostringstream text;
    text << "state counts free/referenced/cached/shared " << counts_.free << '/'
         << counts_.referenced << '/' << counts_.cached << '/' << counts_.shared
         << " differ from the recount " << recount.free << '/' << recount.referenced << '/'
         << recount.cached << '/' << recount.shared;
    fail(text.str());
  }

  // Sequences agree with the pages they point at.
  for (const auto& [id, seq] : sequences_) {
    const std::string name = "sequence " + std::to_string(id);
    if (seq.pages.size() * static_cast<std::size_t>(size) < seq.tokens.size()) {
      fail(name + " has more tokens than page capacity");
    }
    if (seq.computed < 0 || static_cast<std::size_t>(seq.computed) > seq.tokens.size()) {
      fail(name + " has computed " + std::to_string(seq.computed));
    }
    for (std::size_t position = 0; position < seq.pages.size(); ++position) {
      const PageIndex index = seq.pages[position];
      if (index < 0 || index >= config_.num_pages) continue;
      const PageIdentity& identity = page(index).identity;
      const std::size_t begin = position * static_cast<std::size_t>(size);
      const std::size_t known =
          seq.tokens.size() > begin ? std::min<std::size_t>(size, seq.tokens.size() - begin) : 0;
      const std::size_t compare = std::min<std::size_t>(known, std::size_t(identity.filled));
      for (std::size_t i = 0; i < compare; ++i) {
        if (identity.tokens[i] != seq.tokens[begin + i]) {
          fail(name + " disagrees with " + page_name(index) + " about token " +
               std::to_string(begin + i));
          break;
        }
      }
      const std::int64_t needed =
          std::clamp<std::int64_t>(std::int64_t{seq.computed} - std::int64_t(begin), 0, size);
      if (identity.valid < needed) {
        fail(name + " counts " + std::to_string(needed) + " computed tokens in " +
             page_name(index) + " which has only " + std::to_string(identity.valid));
      }
      if (identity.hashed && position > 0) {
        if (position > seq.hashes.size() || identity.link != ChainLink::Known ||
            identity.previous != seq.hashes[position - 1]) {
          fail(name + ": " + page_name(index) + " is not chained to the page before it");
        }
      }
      if (identity.hashed &&
          (position >= seq.hashes.size() || identity.hash != seq.hashes[position])) {
        fail(name + ": " + page_name(index) + " has another hash than the sequence's chain");
      }
      if (identity.hashed && position == 0 && identity.link != ChainLink::Root) {
        fail(name + ": its first page is hashed as a continuation");
      }
    }
  }

  // Pages promised under ReserveOnAdmission add up and can all be had.
  int promised = 0;
  for (const auto& [id, seq] : sequences_) {
    if (seq.reserved < 0) fail("sequence " + std::to_string(id) + " has a negative reservation");
    promised += seq.reserved;
    if (config_.window > 0) {
      if (owned_pages(seq) > seq.bound) {
        fail("sequence " + std::to_string(id) + " holds " + std::to_string(owned_pages(seq)) +
             " pages of its own, more than its bound of " + std::to_string(seq.bound));
      }
      if (seq.owned.size() != seq.pages.size()) {
        fail("sequence " + std::to_string(id) + " has no ownership for every page slot");
      }
      const std::size_t keep = seq.whole ? 0 : first_kept_page(seq.computed);
      for (std::size_t slot = 0; slot < std::min(keep, seq.pages.size()); ++slot) {
        if (seq.pages[slot] != kNoPage) {
          fail("sequence " + std::to_string(id) + " still holds page slot " + std::to_string(slot) +
               ", wholly before its window");
        }
      }
      for (std::size_t slot = keep; slot * size < std::size_t(seq.computed); ++slot) {
        if (slot < seq.pages.size() && seq.pages[slot] == kNoPage) {
          fail("sequence " + std::to_string(id) + " lost page slot " + std::to_string(slot) +
               " inside its window");
        }
      }
    }
  }
  if (promised != reserved_pages_) {
    fail("reserved pages " + std::to_string(reserved_pages_) + " differ from the sequences' " +
         std::to_string(promised));
  }
  if (reserved_pages_ > 0 && obtainable_pages({}) < reserved_pages_) {
    fail(std::to_string(reserved_pages_) + " pages are promised but only " +
         std::to_string(obtainable_pages({})) + " can be had");
  }

  for (std::string& problem : host_.check_invariants())
    problems.push_back(std::move(problem));

  // A page read from disk holds a whole hashed page.
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    const PageRecord& page = this->page(index);
    if (page.from_disk && (!page.identity.hashed || page.identity.valid != size)) {
      fail("page " + std::to_string(index) + " is marked as read from disk but holds " +
           std::to_string(page.identity.valid) + " tokens" +
           (page.identity.hashed ? "" : " without a hash"));
    }
  }

  if (window_pool_) {
    // Both pools hold the same sequences with the same tokens and progress.
    if (window_sequences_.size() != sequences_.size()) {
      fail(std::to_string(sequences_.size()) + " sequences but " +
           std::to_string(window_sequences_.size()) + " in the window pool");
    }
    for (const auto& [id, windowed] : window_sequences_) {
      if (!sequences_.contains(id) || !window_pool_->contains(windowed)) {
        fail("sequence " + std::to_string(id) + " is missing from one of the pools");
        continue;
      }
      const std::span<const TokenId> here = tokens(id);
      const std::span<const TokenId> there = window_pool_->tokens(windowed);
      if (!std::equal(here.begin(), here.end(), there.begin(), there.end()) ||
          computed(id) != window_pool_->computed(windowed)) {
        fail("sequence " + std::to_string(id) + " differs between the pools");
      }
    }
    if (window_pool_->sequences().size() != window_sequences_.size()) {
      fail("the window pool holds sequences this cache does not");
    }
    for (std::string& problem : window_pool_->check_invariants())
      problems.push_back("window pool: " + std::move(problem));
  }
  return problems;
}

}  // namespace quire::cache
