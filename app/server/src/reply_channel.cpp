#include <algorithm>
#include <utility>

#include "quire/server/job_host.h"

namespace quire::server {

ReplyChannel::ReplyChannel(int choices) : slots_(static_cast<std::size_t>(std::max(choices, 1))) {}

void ReplyChannel::push_text(int choice, std::string_view text) {
  {
    const std::lock_guard lock(mutex_);
    slots_.at(static_cast<std::size_t>(choice)).text += text;
  }
  changed_.notify_all();
}

void ReplyChannel::finish(int choice, engine::JobResult result) {
  {
    const std::lock_guard lock(mutex_);
    Slot& slot = slots_.at(static_cast<std::size_t>(choice));
    if (slot.ended) return;
    slot.ended = true;
    slot.done = std::move(result);
  }
  changed_.notify_all();
}

ReplyChannel::Update ReplyChannel::wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    return std::ranges::any_of(slots_,
                               [](const Slot& slot) { return !slot.text.empty() || slot.done; });
  });
  Update update;
  update.text.resize(slots_.size());
  update.done.resize(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    update.text[i] = std::exchange(slots_[i].text, {});
    update.done[i] = std::exchange(slots_[i].done, std::nullopt);
  }
  return update;
}

bool ReplyChannel::wait_ended(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout,
                           [&] { return std::ranges::all_of(slots_, &Slot::ended); });
}

std::vector<engine::JobResult> ReplyChannel::wait_results() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return std::ranges::all_of(slots_, &Slot::ended); });
  std::vector<engine::JobResult> results;
  for (Slot& slot : slots_) {
    // A result taken by wait() before is not here again; the slot ended.
    results.push_back(slot.done ? std::move(*slot.done) : engine::JobResult{});
    slot.done.reset();
    slot.text.clear();
  }
  return results;
}

}  // namespace quire::server
