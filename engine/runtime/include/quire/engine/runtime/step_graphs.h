#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "quire/kernels/backend.h"

namespace quire::engine {

// What a recorded step has baked into its launches besides buffer addresses:
// the tokens of each sequence (they fix the launch sizes and which rows give
// logits) and the page-table width.
struct StepShape {
  std::vector<int> tokens;   // per sequence
  int max_pages = 0;         // page_bucket() of the longest page table
  int max_window_pages = 0;  // the same of the window pool's tables (0: none)
  auto operator<=>(const StepShape&) const = default;
};

// The width that page tables of up to `pages` pages are padded to in a
// recorded step: a power of two, at least kMinPageBucket, so that sequences
// growing by a page keep replaying the same recording most of the time and a
// long conversation visits a handful of widths.
inline constexpr int kMinPageBucket = 4;
int page_bucket(int pages);

struct StepGraphStatistics {
  std::int64_t captures = 0;       // steps recorded (each also ran by replay)
  std::int64_t replays = 0;        // steps run by replaying a recording
  std::int64_t direct = 0;         // recordable steps run op by op
  std::int64_t failures = 0;       // recordings that failed; the shape runs op by op
  std::int64_t invalidations = 0;  // times recordings were dropped as stale
  std::string first_failure;       // why the first recording failed
};

// Decode steps recorded once and replayed as a whole on backends that can
// (Backend::begin_capture): at batch 1 a step is hundreds of small launches,
// and issuing them one by one costs a large share of the step on a GPU.
//
// A shape is run directly the first time it is seen, so that workspaces the
// backend grows lazily reach their size outside any recording; the second
// time it is recorded and replayed; from then on replayed. A recording that
// fails leaves its shape to run directly (reported once, never thrown). The
// owner calls invalidate() whenever a buffer the steps use is reallocated.
class StepGraphs {
 public:
  StepGraphs(kernels::Backend& backend, int device);

  // Off: every step runs directly and recordings are dropped.
  void set_enabled(bool enabled);
  bool enabled() const { return enabled_ && backend_.supports_capture(); }
  // Where the first failed recording is reported; the default writes one
  // line to standard error.
  void set_report(std::function<void(const std::string&)> report) { report_ = std::move(report); }

  // Queues one step's device work: `enqueue` issues it op by op, or it is
  // recorded, or a recording of `shape` is replayed. `enqueue` must issue
  // the same ops on the same buffers for the same shape, with everything
  // that varies (tokens, positions, page tables) in device memory that the
  // caller fills before each run.
  void run(const StepShape& shape, const std::function<void()>& enqueue);

  void invalidate();
  std::size_t recordings() const;
  const StepGraphStatistics& statistics() const { return statistics_; }

 private:
  struct Entry {
    bool seen = false;    // run directly once
    bool failed = false;  // a recording failed: always direct
    std::unique_ptr<kernels::CapturedWork> work;
  };

  void run_directly(const std::function<void()>& enqueue);
  void record(Entry& entry, const std::function<void()>& enqueue);
  Entry* entry_for(const StepShape& shape);

  kernels::Backend& backend_;
  int device_;
  bool enabled_ = true;
  bool reported_ = false;
  std::function<void(const std::string&)> report_;
  std::map<StepShape, Entry> entries_;
  StepGraphStatistics statistics_;
};

}  // namespace quire::engine
