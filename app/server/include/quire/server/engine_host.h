#pragma once

// The engine thread of the server. The Generator is single-threaded, so one
// thread owns it (and through it the runtime and the cache): it takes the
// jobs and cancellations that HTTP handler threads hand over through a
// mutex-protected queue, steps while there is work and sleeps on a condition
// variable while there is none. Each job answers through its own
// ReplyChannel, which the handler thread waits on. Plain C++, no Qt.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "quire/engine/generator/generator.h"

namespace quire::server {

// One job's answer, from the engine thread to the handler thread that waits
// for it: text as it is decided, then the result.
class ReplyChannel {
 public:
  struct Update {
    std::string text;                       // new text since the last wait
    std::optional<engine::JobResult> done;  // set once, with the last text
  };

  // Engine side.
  void push_text(std::string_view text);
  void finish(engine::JobResult result);

  // Handler side: waits until text or the result arrives, or `timeout`
  // passes (then the update is empty).
  Update wait(std::chrono::milliseconds timeout);
  // Waits for the result alone; the text it holds is everything streamed.
  engine::JobResult wait_result();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string text_;
  std::optional<engine::JobResult> done_;
  bool taken_ = false;
};

// What GET /v1/quire/stats reports, as the engine thread last published it.
struct EngineStats {
  std::size_t running = 0;    // jobs in the batch
  std::size_t waiting = 0;    // jobs handed over and not running yet
  std::int64_t requests = 0;  // jobs finished since the start
  cache::CacheStats cache;
  std::int64_t sampled_tokens = 0;
};

struct EngineHostConfig {
  // Jobs handed over and not finished (running and waiting) beyond which
  // submit() refuses at once.
  std::size_t max_jobs = 64;
};

class EngineHost {
 public:
  // The generator (and the runtime and tokenizer it uses) must outlive the
  // host; from now on only the host's thread touches them.
  EngineHost(engine::Generator& generator, EngineHostConfig config);
  ~EngineHost();
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;

  // Hands a job over; its on_text and on_done are replaced by the channel's.
  // nullptr when max_jobs are already in flight.
  std::shared_ptr<ReplyChannel> submit(engine::JobRequest request);
  // Ends the job that answers through `channel` (the client went away);
  // its pages are released at the next step. Harmless after it ended.
  void cancel(const std::shared_ptr<ReplyChannel>& channel);

  EngineStats stats() const;
  // Ends every job (each channel gets StopReason::Cancelled) and the thread.
  void stop();

 private:
  struct Submission {
    engine::JobRequest request;
    std::shared_ptr<ReplyChannel> channel;
  };
  void run();
  void take_work(std::vector<Submission>& incoming,
                 std::vector<std::shared_ptr<ReplyChannel>>& cancels);
  void publish();
  void fail_everything(const std::string& why);

  engine::Generator& generator_;
  EngineHostConfig config_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Submission> incoming_;
  std::vector<std::shared_ptr<ReplyChannel>> cancels_;
  std::size_t in_flight_ = 0;
  bool stopping_ = false;
  EngineStats stats_;

  // Engine thread only.
  std::map<ReplyChannel*, engine::JobId> jobs_;
  std::thread thread_;
};

}  // namespace quire::server
