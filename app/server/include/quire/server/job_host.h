#pragma once

// What the HTTP server needs from the engine: a place to hand jobs over and a
// channel per request that answers them. quire-cli serve's EngineHost steps a
// generator of its own on a thread of its own; the desktop application hands
// the same jobs to the generator its chats use. Plain C++, no Qt.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/cache/cache_stats.h"
#include "quire/engine/generator/job.h"

namespace quire::server {

// One request's answer, from the engine thread to the handler thread that
// waits for it: for each of its choices (one job each), text as it is
// decided, then the result.
class ReplyChannel {
 public:
  explicit ReplyChannel(int choices = 1);

  struct Update {
    // Indexed by choice; both sized choices().
    std::vector<std::string> text;                       // new text since the last wait
    std::vector<std::optional<engine::JobResult>> done;  // set once, with the last text
  };

  int choices() const { return static_cast<int>(slots_.size()); }

  // Engine side.
  void push_text(int choice, std::string_view text);
  // A choice ends once; a second report is dropped.
  void finish(int choice, engine::JobResult result);

  // Handler side: waits until text or a result arrives, or `timeout` passes
  // (then the update holds nothing).
  Update wait(std::chrono::milliseconds timeout);
  // Waits for every choice's result, in the order of the choices; the text
  // each holds is everything it streamed.
  std::vector<engine::JobResult> wait_results();
  // Whether every choice has ended, waiting at most `timeout` for it.
  bool wait_ended(std::chrono::milliseconds timeout);

 private:
  struct Slot {
    std::string text;
    std::optional<engine::JobResult> done;
    bool ended = false;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Slot> slots_;
};

// The KV cache's disk tier, for GET /v1/quire/stats (engine::DiskTierStatus
// in plain figures).
struct DiskCacheStats {
  std::string folder;
  std::uint64_t limit_bytes = 0;
  std::uint64_t used_bytes = 0;
  std::uint64_t pages = 0;           // page files in the folder
  std::uint64_t restored_pages = 0;  // read back into the device cache, since the start
  std::uint64_t written_pages = 0;   // by the background writer and by archiving
  // Not written: the writer's queue or the disk was full, or the write failed.
  std::uint64_t dropped_pages = 0;
  bool disk_full = false;
  std::string notice;  // disk_cache::kDiskFullNotice once the disk filled up, else empty
};

// What GET /v1/quire/stats reports, as the engine thread last published it.
// The jobs counted are the server's; the cache is the whole generator's.
struct EngineStats {
  std::size_t running = 0;    // jobs in the batch
  std::size_t waiting = 0;    // jobs handed over and not running yet
  std::int64_t requests = 0;  // requests whose every job finished, since the start
  cache::CacheStats cache;
  std::int64_t sampled_tokens = 0;
  // Speculative decoding over the finished jobs, since the start: tokens
  // drafted and of those the ones the model confirmed.
  std::int64_t drafted_tokens = 0;
  std::int64_t accepted_tokens = 0;
  // With a disk tier: its state after the last request finished (reading it
  // lists the folder, so it is not read at every step; GeneratorJobs::publish).
  std::optional<DiskCacheStats> disk_cache;
};

class JobHost {
 public:
  virtual ~JobHost() = default;

  // Hands over `choices` replies to the request's prompt, `choices` jobs
  // (Generator::submit_alternatives: the prompt is computed once); their
  // on_text and on_done are replaced by the channel's. nullptr when they do
  // not all fit under max_jobs(), or the host takes no more: a request is
  // taken whole or not at all. From any thread.
  virtual std::shared_ptr<ReplyChannel> submit(engine::JobRequest request, int choices) = 0;
  // Ends every job that answers through `channel` (the client went away);
  // their pages are released at the next step. Harmless after they ended.
  virtual void cancel(const std::shared_ptr<ReplyChannel>& channel) = 0;
  // Jobs that may be in flight at once: a request for more choices can never
  // be taken.
  virtual std::size_t max_jobs() const = 0;
  virtual EngineStats stats() const = 0;
};

}  // namespace quire::server
