#include "quire/engine/runtime/step_graphs.h"

#include <exception>
#include <iostream>

namespace quire::engine {
namespace {

// Shapes tracked at once, recorded or not. Batch sizes times page-table
// widths stay well under this in practice; past it, shapes without a
// recording are forgotten to make room.
constexpr std::size_t kMaxShapes = 128;

}  // namespace

int page_bucket(int pages) {
  int bucket = kMinPageBucket;
  while (bucket < pages)
    bucket *= 2;
  return bucket;
}

StepGraphs::StepGraphs(kernels::Backend& backend, int device)
    : backend_(backend),
      device_(device),
      report_([](const std::string& message) { std::cerr << "quire: " << message << '\n'; }) {}

void StepGraphs::set_enabled(bool enabled) {
  enabled_ = enabled;
  if (!enabled_) entries_.clear();
}

std::size_t StepGraphs::recordings() const {
  std::size_t count = 0;
  for (const auto& [shape, entry] : entries_)
    count += entry.work ? 1 : 0;
  return count;
}

void StepGraphs::invalidate() {
  if (recordings() > 0) ++statistics_.invalidations;
  entries_.clear();
}

StepGraphs::Entry* StepGraphs::entry_for(const StepShape& shape) {
  if (const auto found = entries_.find(shape); found != entries_.end()) return &found->second;
  if (entries_.size() >= kMaxShapes) {
    std::erase_if(entries_, [](const auto& item) { return !item.second.work; });
    if (entries_.size() >= kMaxShapes) return nullptr;
  }
  return &entries_[shape];
}

void StepGraphs::run_directly(const std::function<void()>& enqueue) {
  ++statistics_.direct;
  enqueue();
}

void StepGraphs::run(const StepShape& shape, const std::function<void()>& enqueue) {
  Entry* entry = enabled() ? entry_for(shape) : nullptr;
  if (entry == nullptr || entry->failed) return run_directly(enqueue);
  if (entry->work) {
    if (backend_.replay(device_, *entry->work)) {
      ++statistics_.replays;
      return;
    }
    // The backend moved a workspace of its own since: this run warms up
    // anew, and the next one records.
    ++statistics_.invalidations;
    entry->work.reset();
    entry->seen = false;
  }
  if (!entry->seen) {
    entry->seen = true;
    return run_directly(enqueue);
  }
  record(*entry, enqueue);
}

void StepGraphs::record(Entry& entry, const std::function<void()>& enqueue) {
  std::string failure;
  try {
    backend_.begin_capture(device_);
  } catch (const std::exception& error) {
    failure = error.what();
  }
  if (failure.empty()) {
    // Nothing runs while recording: an op that throws here (one that would
    // wait or allocate) has done nothing on the device, and the direct run
    // below does the step, or throws the op's real error.
    try {
      enqueue();
    } catch (const std::exception& error) {
      failure = error.what();
    } catch (...) {
      failure = "an op threw while recording";
    }
    try {
      std::unique_ptr<kernels::CapturedWork> work = backend_.end_capture(device_);
      if (failure.empty()) entry.work = std::move(work);
    } catch (const std::exception& error) {
      if (failure.empty()) failure = error.what();
    }
  }
  if (entry.work) {
    ++statistics_.captures;
    if (backend_.replay(device_, *entry.work)) {
      ++statistics_.replays;
      return;
    }
    entry.work.reset();  // stale at once: a workspace moved while recording
    failure = "a workspace moved while recording";
  }
  entry.failed = true;
  ++statistics_.failures;
  if (statistics_.first_failure.empty()) statistics_.first_failure = failure;
  if (!reported_ && report_) {
    reported_ = true;
    report_(
        "recording a decode step as a graph failed, so steps of its shape run op by op "
        "(further failures are only counted): " +
        failure);
  }
  run_directly(enqueue);
}

}  // namespace quire::engine
