// Two pools for mixed models. Gemma 2 slides every other layer over 4096
// positions and Gemma 3 five layers in six over 1024 (in their published
// configurations), while the rest attend to the whole conversation. One pool
// would keep every layer's K/V of every page, so on long chats most of the
// cache would hold positions the sliding layers never read again.
//
// So the sliding ("windowed") layers take their pages from a pool of their
// own, a PageCache whose window is theirs (CacheConfig::window_pool()): each
// sequence has a page table there too, bounded exactly as when every layer
// slides (window + one step + one page; pages behind the window go back to
// that pool under their hash), and the other layers keep every page in this
// pool. A position's K/V is written in both pools in the same step, so the
// two tables always describe the same tokens.
//
// Page hashes are the same chained token hashes in both pools: a page of
// tokens is the same page in both. A new turn therefore finds the global
// layers' pages of its prefix here and the pages of the prefix's window in
// the window pool. It reuses a prefix only as far as both pools hold what
// the next query needs: each pool is planned with AdmissionRequest::
// reuse_limit set to what the other can serve, until both agree, so both
// compute from the same position. When the window pool has evicted the
// window of a long prefix, the turn computes again from where its window
// pages are missing, although the global pages are still here.
//
// The window pool has no host tier (its pages are few and short-lived) and
// is never defragmented; host saves, restores, defragmentation and the
// page and token counts of this cache's statistics concern the global
// layers only (the window pool's own are window_pool()->stats()), while
// CacheStats::devices counts the bytes of both pools on each device. A model
// that is not mixed has no window pool and takes none of these paths.

#include <stdexcept>

#include "quire/cache/page_cache.h"

namespace quire::cache {

SequenceId PageCache::window_sequence(SequenceId id) const {
  const auto found = window_sequences_.find(id);
  if (found == window_sequences_.end()) {
    throw std::out_of_range("no sequence " + std::to_string(id) + " in the cache");
  }
  return found->second;
}

std::span<const PageIndex> PageCache::window_page_table(SequenceId id) const {
  if (!window_pool_) return page_table(id);
  return window_pool_->page_table(window_sequence(id));
}

std::int32_t PageCache::covered_prefix(const AdmissionPlan& plan) const {
  const std::span<const TokenId> tokens(plan.request_.tokens);
  const std::int32_t size = config_.page_size;
  std::int32_t covered = 0;
  for (std::size_t i = 0; i < plan.slots_.size(); ++i) {
    const std::int32_t begin = static_cast<std::int32_t>(i) * size;
    if (begin >= static_cast<std::int32_t>(tokens.size())) break;
    const std::int32_t count = std::min<std::int32_t>(size, std::int32_t(tokens.size()) - begin);
    const AdmissionPlan::Slot& slot = plan.slots_[i];
    std::int32_t here = 0;
    switch (slot.source) {
      case AdmissionPlan::Source::Share:
      case AdmissionPlan::Source::Revive:
        here = page(slot.page).identity.valid;
        break;
      case AdmissionPlan::Source::Restore:
      case AdmissionPlan::Source::Disk:
      case AdmissionPlan::Source::Skip:
        here = size;
        break;
      case AdmissionPlan::Source::Fresh:
        here = slot.copy_tokens;
        break;
      case AdmissionPlan::Source::Later:
        break;
    }
    here = std::min(here, count);
    covered += here;
    if (here < count) break;
  }
  return covered;
}

AdmissionPlan PageCache::prepare_pooled(AdmissionRequest request) const {
  // Recomputing the whole prompt writes every position in both pools, so
  // neither may share a page.
  if (request.every_page) request.reuse_limit = 0;
  for (;;) {
    AdmissionPlan main = prepare_here(request);
    if (!main.fits()) return main;
    AdmissionPlan window = window_pool_->prepare_here(request);
    if (!window.fits()) {
      main.status_ = window.status_;
      main.reason_ = "the sliding-window layers' pool: " + window.reason_;
      main.pages_needed_ = window.pages_needed_;
      main.pages_available_ = window.pages_available_;
      return main;
    }
    // Each limit is at most the previous one, and a plan limited to what
    // both covered covers exactly that unless a pool now covers less (a
    // copy given up for want of pages), so this ends.
    const std::int32_t agreed =
        std::min(covered_prefix(main), window_pool_->covered_prefix(window));
    if (main.cached_tokens_ == agreed && window.cached_tokens_ == agreed) {
      main.window_plan_ = std::make_shared<const AdmissionPlan>(std::move(window));
      return main;
    }
    request.reuse_limit = agreed;
  }
}

AdmissionPlan PageCache::prepare(AdmissionRequest request) const {
  if (window_pool_) return prepare_pooled(std::move(request));
  return prepare_here(std::move(request));
}

Admission PageCache::commit(AdmissionPlan plan) {
  // A plan that does not fit, or is stale here, is refused before anything changes.
  if (!window_pool_ || !plan.fits() || plan.generation_ != generation_) {
    return commit_here(std::move(plan));
  }
  if (!plan.window_plan_)
    throw std::logic_error("an admission plan without its window pool's part");
  if (plan.window_plan_->generation_ != window_pool_->generation_) {
    throw std::logic_error("stale admission plan: the window pool changed after it was prepared");
  }
  AdmissionPlan window = *plan.window_plan_;
  Admission admission = commit_here(std::move(plan));
  Admission windowed = window_pool_->commit_here(std::move(window));
  window_sequences_.emplace(admission.sequence, windowed.sequence);
  admission.instructions.window_copies = std::move(windowed.instructions.copies);
  admission.evicted_pages += windowed.evicted_pages;
  return admission;
}

std::optional<Admission> PageCache::branch(const BranchRequest& request, AdmissionPlan* refused) {
  if (!window_pool_) return branch_here(request, refused);
  BranchRequest windowed_request = request;
  windowed_request.source = window_sequence(request.source);
  // The window pool first: it refuses a prefix whose window it handed back.
  std::optional<Admission> windowed = window_pool_->branch_here(windowed_request, refused);
  if (!windowed) return std::nullopt;
  std::optional<Admission> branch = branch_here(request, refused);
  if (!branch) {
    window_pool_->abandon_here(windowed->sequence, windowed->instructions);
    return std::nullopt;
  }
  window_sequences_.emplace(branch->sequence, windowed->sequence);
  branch->instructions.window_copies = std::move(windowed->instructions.copies);
  return branch;
}

void PageCache::settle_preemptions(AppendResult& main, AppendResult& window) {
  for (const SequenceId id : main.preempted) {
    const auto found = window_sequences_.find(id);
    if (found == window_sequences_.end()) continue;
    window_pool_->release_here(found->second);
    window_sequences_.erase(found);
  }
  for (const SequenceId windowed : window.preempted) {
    for (auto it = window_sequences_.begin(); it != window_sequences_.end(); ++it) {
      if (it->second != windowed) continue;
      preempt(it->first);
      main.preempted.push_back(it->first);
      window_sequences_.erase(it);
      break;
    }
  }
  if (window.status == AppendStatus::Preempted) main.status = AppendStatus::Preempted;
  if (window.status == AppendStatus::NoSpace) main.status = AppendStatus::NoSpace;
}

AppendResult PageCache::append(SequenceId id, std::span<const TokenId> tokens) {
  if (!window_pool_) return append_here(id, tokens);
  const SequenceId windowed = window_sequence(id);
  AppendResult main = append_here(id, tokens);
  AppendResult window;
  if (main.status == AppendStatus::Appended) window = window_pool_->append_here(windowed, tokens);
  settle_preemptions(main, window);
  return main;
}

AppendResult PageCache::ensure_pages(SequenceId id, std::int32_t end) {
  if (!window_pool_) return ensure_pages_here(id, end);
  const SequenceId windowed = window_sequence(id);
  AppendResult main = ensure_pages_here(id, end);
  AppendResult window;
  if (main.status == AppendStatus::Appended)
    window = window_pool_->ensure_pages_here(windowed, end);
  settle_preemptions(main, window);
  return main;
}

void PageCache::mark_computed(SequenceId id, std::int32_t end) {
  if (window_pool_) window_pool_->mark_computed_here(window_sequence(id), end);
  mark_computed_here(id, end);
}

void PageCache::mark_overwritten(SequenceId id, std::int32_t begin, std::int32_t end) {
  if (window_pool_) window_pool_->mark_overwritten_here(window_sequence(id), begin, end);
  mark_overwritten_here(id, begin, end);
}

void PageCache::truncate(SequenceId id, std::int32_t length) {
  if (window_pool_) window_pool_->truncate_here(window_sequence(id), length);
  truncate_here(id, length);
}

void PageCache::release(SequenceId id) {
  if (window_pool_) {
    window_pool_->release_here(window_sequence(id));
    window_sequences_.erase(id);
  }
  release_here(id);
}

void PageCache::abandon(SequenceId id, const CacheInstructions& instructions) {
  if (window_pool_) {
    CacheInstructions windowed;
    windowed.copies = instructions.window_copies;
    window_pool_->abandon_here(window_sequence(id), windowed);
    window_sequences_.erase(id);
  }
  abandon_here(id, instructions);
}

void PageCache::release_after_failure(SequenceId id) {
  if (window_pool_) {
    window_pool_->release_after_failure_here(window_sequence(id));
    window_sequences_.erase(id);
  }
  release_after_failure_here(id);
}

}  // namespace quire::cache
